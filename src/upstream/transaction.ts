/**
 * Transaction area's OAuth 2.0 authorization-code flow: op 4 (authorize, `{base_url}`) and op 5
 * (token exchange, `{gateway_url}`). The spec shows neither answer; what we accept is below.
 */
import type { BankCredentials, BankUrls } from './types.ts';
import { ErrorCode } from '../errors.ts';
import { basicAuthorization, bankUrl, type BankHttp, type BankResponse } from './http.ts';
import {
  AnswerRefused,
  bankText,
  invalidAnswer,
  isObject,
  objectBody,
  optionalInteger,
  optionalString,
  type AnswerFailure,
  type JsonObject,
} from './read.ts';
import type { AuthorizationCodeRecord, TransactionTokenRecord } from '../domain/index.ts';
import type { TransactionClient } from './types.ts';

const AUTHORIZE_PATH = '/transaction/oauth/authorize/';
const FORM = 'application/x-www-form-urlencoded';

/** Creates the transaction-area OAuth client (ops 4-5). */
export function createTransactionClient(http: BankHttp, urls: BankUrls, credentials: BankCredentials): TransactionClient {
  return {
    authorize(redirectUri) {
      return http.call({
        area: 'transaction',
        operation: 'authorize',
        method: 'GET',
        // The spec calls them form fields; on a GET they travel as the URL-encoded query.
        url: bankUrl(urls.base, AUTHORIZE_PATH, {
          response_type: 'code',
          client_id: credentials.oauthClientId,
          redirect_uri: redirectUri,
        }),
        headers: { 'content-type': FORM },
        supplier: 'subgraph',
        acceptRedirect: true,
        readFailure: readOAuthFailure,
        read: (response) => readAuthorization(response, redirectUri),
      });
    },

    exchangeCode({ code, redirectUri }) {
      const form = new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: credentials.oauthClientId,
        code,
        redirect_uri: redirectUri,
      });
      return http.call({
        area: 'transaction',
        operation: 'exchangeCode',
        method: 'POST',
        url: bankUrl(urls.gateway, AUTHORIZE_PATH),
        headers: {
          'content-type': FORM,
          authorization: basicAuthorization(credentials.oauthClientId, credentials.oauthClientSecret.reveal()),
        },
        body: form.toString(),
        supplier: 'subgraph',
        readFailure: readOAuthFailure,
        read: ({ body }) => readToken(body),
      });
    },
  };
}

/**
 * RFC 6749 §5.2 errors. `invalid_grant` is about the code or redirect URI the caller brought, so a
 * refusal of theirs; `invalid_client` refuses our configured client; the rest are our requests.
 */
function readOAuthFailure(status: number, body: unknown): Partial<AnswerFailure> | undefined {
  if (!isObject(body)) return undefined;
  const responseCode = bankText(body.error);
  const responseMessage = bankText(body.error_description);
  if (status >= 500) return { responseCode, responseMessage };
  if (responseCode === 'invalid_grant') return { code: ErrorCode.UPSTREAM_REJECTED, responseCode, responseMessage };
  if (responseCode === 'invalid_client') return { code: ErrorCode.UPSTREAM_UNAUTHORIZED, responseCode, responseMessage };
  return { responseCode, responseMessage };
}

/**
 * Op 4's answer is not shown. We accept a 2xx JSON body with `code` (top level or under `data`),
 * or a 3xx whose `Location` carries `code` (the browser form of the flow). An `error` in either is
 * the bank refusing the authorization.
 */
function readAuthorization(response: BankResponse, redirectUri: string): AuthorizationCodeRecord {
  if (response.status >= 300) return { code: codeFromLocation(response.headers.location, redirectUri), redirectUri };
  const body = objectBody(response.body, 'authorization');
  const fields: JsonObject = isObject(body.data) ? body.data : body;
  const error = bankText(fields.error);
  if (error !== undefined) throw refusedOAuth(error, bankText(fields.error_description));
  const code = optionalString(fields, 'code');
  if (code === null) throw invalidAnswer('authorization.code is missing');
  return { code, redirectUri };
}

function codeFromLocation(location: string | string[] | undefined, redirectUri: string): string {
  if (typeof location !== 'string' || location === '') throw invalidAnswer('redirect without a Location');
  let params: URLSearchParams;
  try {
    const url = new URL(location, redirectUri);
    // The code flow puts it in the query; a fragment is read too, should the bank use one.
    const inQuery = url.searchParams.has('code') || url.searchParams.has('error');
    params = inQuery ? url.searchParams : new URLSearchParams(url.hash.slice(1));
  } catch {
    throw invalidAnswer('Location is not a URL');
  }
  const error = bankText(params.get('error'));
  if (error !== undefined) throw refusedOAuth(error, bankText(params.get('error_description')));
  const code = params.get('code');
  if (code === null || code === '') throw invalidAnswer('Location carries no code');
  return code;
}

function refusedOAuth(error: string, description: string | undefined): AnswerRefused {
  return new AnswerRefused({
    code: ErrorCode.UPSTREAM_REJECTED,
    responseCode: error,
    responseMessage: description,
    reason: 'authorization refused',
  });
}

/**
 * Op 5's answer is not shown. We accept the OAuth 2.0 token response (RFC 6749 §5.1), also under
 * `data` and with camelCase names, since gateways that wrap OAuth often rename it so.
 */
function readToken(value: unknown): TransactionTokenRecord {
  const body = objectBody(value, 'token response');
  const fields: JsonObject = isObject(body.data) ? body.data : body;
  const error = bankText(fields.error);
  if (error !== undefined) throw refusedOAuth(error, bankText(fields.error_description));
  const accessToken = optionalString(fields, 'access_token', 'accessToken');
  if (accessToken === null) throw invalidAnswer('token response.access_token is missing');
  return {
    accessToken,
    tokenType: optionalString(fields, 'token_type', 'tokenType'),
    expiresIn: optionalInteger(fields, 'expires_in', 'expiresIn'),
    refreshToken: optionalString(fields, 'refresh_token', 'refreshToken'),
    scope: optionalString(fields, 'scope'),
  };
}
