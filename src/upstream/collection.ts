/**
 * The bank's collection service (`{collection_url}`, `BANK_COLLECTION_URL`; ops 15 to 17 of its
 * collection API): what it holds of a transfer, by sessionId or settlementId, and a request to send
 * a notification again. Every call carries `Client-Id` and `X-Auth-Signature`, the pair the bank
 * signs its deliveries with: the bank checks our calls with it as we check its deliveries.
 */
import { ErrorCode, UpstreamError, badUserInput } from '../errors.ts';
import { collectionSignature } from '../domain/index.ts';
import { Secret } from '../secret.ts';
import { readResponseCodeFailure } from './account-record.ts';
import { AMOUNTS, readRepushAnswer, readVerifyAnswer, type IdField } from './collection-answer.ts';
import { parseKeepingNumberText } from './exact-json.ts';
import { bankUrl, type BankHttp } from './http.ts';
import type { BankUrls, CollectionClient, CollectionCredentials } from './types.ts';

const PATHS = {
  verifyBySessionId: '/PiPverifyTransaction_sessionid',
  verifyBySettlementId: '/PiPverifyTransaction_settlementid',
  repush: '/PiP_RepushTransaction_SettlementId',
} as const;

type Operation = keyof typeof PATHS;

/** Creates the collection-service client (ops 15-17); `timezone` is `BANK_TIMEZONE`, for the bank's times. */
export function createCollectionClient(
  http: BankHttp,
  urls: BankUrls,
  credentials: CollectionCredentials,
  timezone: string,
): CollectionClient {
  // Worked out once; a Secret, since it opens the collection service (and our webhook).
  const signature = new Secret(collectionSignature(credentials.clientId, credentials.clientSecret.reveal()));
  const headers = (): Record<string, string> => ({ 'client-id': credentials.clientId, 'x-auth-signature': signature.reveal() });
  const urlOf = (operation: Operation, query?: Record<string, string>) => {
    // Unset only where confirmation is off (the config requires it otherwise): refused, never a crash.
    if (urls.collection === undefined) throw notConfigured(operation);
    return bankUrl(urls.collection, PATHS[operation], query);
  };
  // Ops 15 and 16 are reads: retried on a transient fault, shared while in flight (shared-reads.ts).
  const verify = (operation: 'verifyBySessionId' | 'verifyBySettlementId', asked: { field: IdField; id: string }) => {
    if (asked.id.trim() === '') throw badUserInput(asked.field, 'must not be empty to ask the bank about a transfer.');
    const param = asked.field === 'sessionId' ? 'session_id' : 'settlement_id';
    // Asked and compared trimmed: the bank's ids carry no spaces, whatever a delivery padded them with.
    const url = urlOf(operation, { [param]: asked.id.trim() });
    return http.call({
      area: 'collection',
      operation,
      method: 'GET',
      url,
      headers: headers(),
      supplier: 'subgraph',
      idempotent: true,
      parse: (text) => parseKeepingNumberText(text, AMOUNTS),
      readFailure: readResponseCodeFailure,
      read: (response) => readVerifyAnswer(response, asked, timezone),
    });
  };

  return {
    async verifyBySessionId(sessionId) {
      return verify('verifyBySessionId', { field: 'sessionId', id: sessionId });
    },

    async verifyBySettlementId(settlementId) {
      return verify('verifyBySettlementId', { field: 'settlementId', id: settlementId });
    },

    async repush({ settlementId = '', sessionId = '' }) {
      if (settlementId.trim() === '' && sessionId.trim() === '') {
        throw badUserInput('settlementId', 'or sessionId is needed to ask the bank to send a notification again.');
      }
      // Not idempotent: a time-out may come after the bank queued it, and a second request would send it twice.
      return http.call({
        area: 'collection',
        operation: 'repush',
        method: 'POST',
        url: urlOf('repush'),
        headers: { ...headers(), 'content-type': 'application/json' },
        body: JSON.stringify({ settlement_id: settlementId, session_id: sessionId }),
        supplier: 'subgraph',
        readFailure: readResponseCodeFailure,
        read: ({ body }) => readRepushAnswer(body),
      });
    },
  };
}

function notConfigured(operation: Operation): UpstreamError {
  return new UpstreamError(
    ErrorCode.UPSTREAM_UNAVAILABLE,
    { area: 'collection', operation },
    "The bank's collection service is not configured (BANK_COLLECTION_URL is unset), so transfers cannot be checked with the bank.",
  );
}
