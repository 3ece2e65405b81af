/**
 * Wallet-merchant authentication (`{wallet_url}`, ops 8-12). Every credential and token here is the
 * caller's, so a 4xx, or a 200 saying `status: false`, is the bank refusing the caller's input.
 * Failure bodies are not shown; we read `{status: false, message}` and carry `message` along.
 */
import { DateTime } from 'luxon';
import type { BankUrls } from './types.ts';
import { bankUrl, type BankCall, type BankHttp, type BankResponse } from './http.ts';
import {
  bankText,
  invalidAnswer,
  isObject,
  objectBody,
  optionalBoolean,
  optionalString,
  rejectedAnswer,
  requiredString,
  type AnswerFailure,
  type JsonObject,
} from './read.ts';
import type {
  MerchantRecord,
  MerchantSessionRecord,
  MerchantTokensRecord,
  MerchantUserRecord,
  StatusMessageRecord,
} from '../domain/index.ts';
import type { WalletClient } from './types.ts';

const JSON_TYPE = { 'content-type': 'application/json' };

type WalletRequest = Pick<BankCall<unknown>, 'headers' | 'body' | 'expect'>;

/** Creates the wallet-merchant client (ops 8-12). It holds no credential of ours. */
export function createWalletClient(http: BankHttp, urls: BankUrls): WalletClient {
  const post = <T>(operation: string, path: string, request: WalletRequest, read: (r: BankResponse) => T) =>
    http.call<T>({
      area: 'wallet',
      operation,
      method: 'POST',
      url: bankUrl(urls.wallet, path),
      supplier: 'caller',
      readFailure: readWalletFailure,
      ...request,
      read,
    });

  return {
    login({ email, password }) {
      const body = JSON.stringify({ email: base64(email), password: base64(password) });
      return post('login', '/auth/login', { headers: JSON_TYPE, body }, readSession);
    },

    async logout({ accessToken, refreshToken }) {
      const headers = { 'x-access-token': accessToken, 'x-refresh-token': refreshToken };
      // Op 9 answers 200 with no body; whatever body comes is read only for `status: false`.
      await post('logout', '/auth/logout', { headers, expect: 'optional' }, ({ body }) => refuseStatusFalse(body));
    },

    forgotPassword(email) {
      // Op 10 sends the address as plain text, as the spec shows (only login base64-encodes).
      const body = JSON.stringify({ email });
      return post('forgotPassword', '/auth/password/forget', { headers: JSON_TYPE, body }, (response) =>
        readStatusMessage(response.body, 'forgot-password answer'),
      );
    },

    resetPassword({ resetCode, password }) {
      const body = JSON.stringify({ resetCode, password });
      return post('resetPassword', '/auth/password/reset', { headers: JSON_TYPE, body }, (response) =>
        readStatusMessage(response.body, 'reset-password answer'),
      );
    },

    refreshSession(refreshToken) {
      const request: WalletRequest = { headers: { 'x-refresh-token': refreshToken }, expect: 'optional' };
      return post('refreshSession', '/auth/refresh/token', request, (response) => {
        refuseStatusFalse(response.body);
        return readTokens(response);
      });
    },
  };
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

function readWalletFailure(_status: number, body: unknown): Partial<AnswerFailure> | undefined {
  return isObject(body) ? { responseMessage: bankText(body.message) } : undefined;
}

function refuseStatusFalse(body: unknown): void {
  if (isObject(body) && body.status === false) throw rejectedAnswer(undefined, bankText(body.message));
}

function readStatusMessage(value: unknown, what: string): StatusMessageRecord {
  const body = objectBody(value, what);
  refuseStatusFalse(body);
  if (body.status !== true) throw invalidAnswer(`${what}.status is not a boolean`);
  return { status: true, message: optionalString(body, 'message') };
}

/** Tokens travel in the X-Access-Token / X-Refresh-Token response headers, never the body. */
function readTokens({ headers }: BankResponse): MerchantTokensRecord {
  const accessToken = headers['x-access-token'];
  const refreshToken = headers['x-refresh-token'];
  if (typeof accessToken !== 'string' || accessToken === '') throw invalidAnswer('X-Access-Token header is missing');
  if (typeof refreshToken !== 'string' || refreshToken === '') throw invalidAnswer('X-Refresh-Token header is missing');
  return { accessToken, refreshToken };
}

function readSession(response: BankResponse): MerchantSessionRecord {
  const body = objectBody(response.body, 'login answer');
  refuseStatusFalse(body);
  const tokens = readTokens(response);
  // `data` is the user (the spec's table); a `data.user` nesting is read as well.
  const data = objectBody(body.data, 'login answer.data');
  const user = isObject(data.user) ? data.user : data;
  return { ...tokens, user: readUser(user), merchant: readMerchant(objectBody(body.merchant, 'login answer.merchant')) };
}

function readUser(user: JsonObject): MerchantUserRecord {
  return {
    id: requiredString(user, 'id', 'user'),
    email: optionalString(user, 'email'),
    firstName: optionalString(user, 'firstName'),
    lastName: optionalString(user, 'lastName'),
    role: optionalString(user, 'role'),
    createdAt: timestamp(user.createdAt),
    updatedAt: timestamp(user.updatedAt),
  };
}

function readMerchant(merchant: JsonObject): MerchantRecord {
  // The full sets of `mode` and `review` values are not shown (seen: SANDBOX, PENDING): passed on as text.
  return {
    id: requiredString(merchant, 'id', 'merchant'),
    email: optionalString(merchant, 'email'),
    firstName: optionalString(merchant, 'firstName'),
    lastName: optionalString(merchant, 'lastName'),
    businessName: optionalString(merchant, 'businessName'),
    businessType: optionalString(merchant, 'businessType'),
    mode: optionalString(merchant, 'mode'),
    review: optionalString(merchant, 'review'),
    role: optionalString(merchant, 'role'),
    owner: optionalBoolean(merchant, 'owner'),
    createdAt: timestamp(merchant.createdAt),
    updatedAt: timestamp(merchant.updatedAt),
  };
}

/**
 * An ISO 8601 timestamp with its offset, kept as the bank wrote it. One without an offset names no
 * instant (we would have to guess the zone), so it is `null`, as is anything unreadable.
 */
function timestamp(value: unknown): string | null {
  if (typeof value !== 'string' || !/T.*(Z|[+-]\d{2}(:?\d{2})?)$/i.test(value)) return null;
  return DateTime.fromISO(value, { setZone: true }).isValid ? value : null;
}
