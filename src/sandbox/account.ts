import { randomInt } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { accountHeadersValid } from './auth.ts';
import { findSandboxAccount, sandboxBanks, sandboxBvns } from './data.ts';
import { areaErrorHandler, searchParams, type SandboxDeps } from './http.ts';

export const APPROVED = 'Approved or completed successfully';

/** NIBSS's "unable to locate record": the answer to an unknown account or BVN (HTTP 200). */
export const NOT_FOUND = { responseCode: '25', responseMessage: 'Unable to locate record' } as const;

/** The account area's failure bodies (not shown by the spec; see docs/bank-wire-format.md). */
function failure(statusCode: number, responseMessage?: string): { responseCode: string; responseMessage: string } {
  if (statusCode === 401) {
    return { responseCode: '401', responseMessage: responseMessage ?? 'Invalid or missing API credentials' };
  }
  if (statusCode >= 500) return { responseCode: '96', responseMessage: responseMessage ?? 'System malfunction' };
  return { responseCode: '99', responseMessage: responseMessage ?? 'Bad request' };
}

/** A fresh NIP session reference: "NIP", the UTC time as yyMMddHHmmss, six random digits. */
export function transactionReference(now: number): string {
  const stamp = new Date(now).toISOString().replace(/\D/g, '').slice(2, 14);
  return `NIP${stamp}${String(randomInt(0, 1_000_000)).padStart(6, '0')}`;
}

/**
 * The name-enquiry answer shared by ops 1 and 13: the account record for a known account (at
 * `bankCode`, or at any bank when it is not given), else code 25.
 */
export function nameEnquiry(accountNumber: string, bankCode: string | undefined, now: number): Record<string, string> {
  const account = findSandboxAccount(accountNumber, bankCode);
  if (account === undefined) return { ...NOT_FOUND };
  // Field order as the spec's account record lists them.
  return {
    bankCode: account.bankCode,
    accountName: account.accountName,
    transactionReference: transactionReference(now),
    bvn: account.bvn,
    responseMessage: APPROVED,
    accountNumber: account.accountNumber,
    responseCode: '00',
  };
}

/** Ops 1-3 under `{base_url}`: name enquiry, bank list and BVN lookup, behind the token headers. */
export function accountRoutes(deps: SandboxDeps): FastifyPluginAsync {
  return async (scope) => {
    scope.setErrorHandler(areaErrorHandler(deps, (status) => failure(status)));
    scope.addHook('preHandler', async (request, reply) => {
      if (!accountHeadersValid(request)) return reply.code(401).send(failure(401));
    });

    const lookupAccount = async (request: FastifyRequest, reply: FastifyReply) => {
      const query = searchParams(request);
      const accountNumber = query.get('account_number') ?? '';
      if (accountNumber === '') return reply.code(400).send(failure(400, 'account_number is required'));
      const bankCode = query.get('bank_code') || undefined;
      return nameEnquiry(accountNumber, bankCode, deps.now());
    };
    // The spec shows op 1 both with and without the /v1 prefix.
    scope.get('/account/NIP', lookupAccount);
    scope.get('/v1/account/NIP', lookupAccount);

    scope.get('/v1/account/NIP/banks', async () => ({
      banks: sandboxBanks.map(({ bankCode, bankName }) => ({ bankCode, bankName })),
      responseCode: '00',
      responseMessage: APPROVED,
    }));

    scope.get('/v1/account/bvn', async (request, reply) => {
      const number = searchParams(request).get('number') ?? '';
      if (number === '') return reply.code(400).send(failure(400, 'number is required'));
      const details = sandboxBvns.find((entry) => entry.bvn === number);
      if (details === undefined) return { ...NOT_FOUND };
      return { responseCode: '00', responseMessage: APPROVED, ...details };
    });
  };
}
