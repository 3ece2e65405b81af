/**
 * The bank's account record and its `responseCode`/`responseMessage` pair, shared by the account
 * area (op 1) and the posting area (op 13), which answer with the same record.
 */
import {
  bankText,
  invalidAnswer,
  isObject,
  objectBody,
  optionalString,
  rejectedAnswer,
  type AnswerFailure,
  type JsonObject,
} from './read.ts';
import type { AccountRecord } from '../domain/index.ts';

/** The bank's approval code. */
const APPROVED = '00';

/** Refuses a body whose `responseCode` is not `00`. A body without one is left to the shape check. */
export function requireApproved(body: JsonObject, what: string): void {
  const code = body.responseCode;
  if (code === undefined || code === APPROVED) return;
  if (typeof code !== 'string') throw invalidAnswer(`${what}.responseCode is not a string`);
  throw rejectedAnswer(code, bankText(body.responseMessage));
}

/**
 * The bank's code and message from a 4xx/5xx body, where it gave them. The account area's failure
 * bodies are not shown; we read the spec's generic failure body (`responseCode`, `responseMessage`).
 */
export function readResponseCodeFailure(_status: number, body: unknown): Partial<AnswerFailure> | undefined {
  if (!isObject(body)) return undefined;
  return { responseCode: bankText(body.responseCode), responseMessage: bankText(body.responseMessage) };
}

/**
 * An approved account record in the domain's names. `bankCode` falls back to the one asked for
 * (op 13's beneficiaryBank) when the record leaves it out; blank bvn/transactionReference become null.
 */
export function readAccountRecord(value: unknown, what: string, requestedBankCode?: string): AccountRecord {
  const body = objectBody(value, what);
  requireApproved(body, what);
  const bankCode = optionalString(body, 'bankCode') ?? requestedBankCode;
  if (bankCode === undefined) throw invalidAnswer(`${what}.bankCode is missing`);
  const accountNumber = optionalString(body, 'accountNumber');
  const accountName = optionalString(body, 'accountName');
  if (accountNumber === null) throw invalidAnswer(`${what}.accountNumber is not a non-empty string`);
  if (accountName === null) throw invalidAnswer(`${what}.accountName is not a non-empty string`);
  return {
    accountNumber,
    bankCode,
    accountName,
    bvn: optionalString(body, 'bvn'),
    transactionReference: optionalString(body, 'transactionReference'),
  };
}
