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
type SignedHeaders = Record<string, string>;

/** Creates the collection-service client (ops 15-17); `timezone` is `BANK_TIMEZONE`, for the bank's times. */
export function createCollectionClient(
  http: BankHttp,
  urls: BankUrls,
  credentials: CollectionCredentials,
  timezone: string,
): CollectionClient {
  const signed = createSigning(credentials);
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
    return signed((headers) =>
      http.call({
        area: 'collection',
        operation,
        method: 'GET',
        url,
        headers,
        supplier: 'subgraph',
        idempotent: true,
        parse: (text) => parseKeepingNumberText(text, AMOUNTS),
        readFailure: readResponseCodeFailure,
        read: (response) => readVerifyAnswer(response, asked, timezone),
      }),
    );
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
      const url = urlOf('repush');
      // Not idempotent: a time-out may come after the bank queued it, and a second request would send
      // it twice. A 401 is not a queued request, though, so asking again with the other secret is safe.
      return signed((headers) =>
        http.call({
          area: 'collection',
          operation: 'repush',
          method: 'POST',
          url,
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ settlement_id: settlementId, session_id: sessionId }),
          supplier: 'subgraph',
          readFailure: readResponseCodeFailure,
          read: ({ body }) => readRepushAnswer(body),
        }),
      );
    },
  };
}

/**
 * Sends a call signed with the secret the bank last accepted: `WEBHOOK_CLIENT_SECRET` at first. While
 * `WEBHOOK_CLIENT_SECRET_PREVIOUS` is set (a rotation under way), a 401 is asked once more with the
 * other secret, and the one that worked is used from then on, until it is refused in turn: the bank
 * switches when it will, and every step of the rotation is answered.
 */
function createSigning(credentials: CollectionCredentials): <T>(send: (headers: SignedHeaders) => Promise<T>) => Promise<T> {
  const { clientId } = credentials;
  // Worked out once; Secrets, since each opens the collection service (and our webhook).
  const signatures = [credentials.clientSecret, credentials.previousSecret]
    .filter((secret) => secret !== undefined)
    .map((secret) => new Secret(collectionSignature(clientId, secret.reveal())));
  const headersOf = (index: number): SignedHeaders => ({ 'client-id': clientId, 'x-auth-signature': signatures[index]!.reveal() });
  let accepted = 0;
  return async (send) => {
    const tried = accepted;
    try {
      return await send(headersOf(tried));
    } catch (error) {
      if (signatures.length < 2 || !(error instanceof UpstreamError) || error.status !== 401) throw error;
      const other = 1 - tried;
      const result = await send(headersOf(other));
      accepted = other;
      return result;
    }
  };
}

function notConfigured(operation: Operation): UpstreamError {
  return new UpstreamError(
    ErrorCode.UPSTREAM_UNAVAILABLE,
    { area: 'collection', operation },
    "The bank's collection service is not configured (BANK_COLLECTION_URL is unset), so transfers cannot be checked with the bank.",
  );
}
