/**
 * The bank's collection service (`{collection_url}`, `BANK_COLLECTION_URL`; ops 15 to 17 of its
 * collection API): what it holds of a transfer, by sessionId or settlementId, and a request to send
 * a notification again. Every call carries `Client-Id` and `X-Auth-Signature`, the pair the bank
 * signs its deliveries with: the bank checks our calls with it as we check its deliveries.
 */
import { ErrorCode, UpstreamError, badUserInput } from '../errors.ts';
import { collectionSignature, isAmountWithinDigits, readBankTime, type BankTransactionRecord, type RepushRecord } from '../domain/index.ts';
import { Secret } from '../secret.ts';
import { readResponseCodeFailure } from './account-record.ts';
import { parseKeepingNumberText } from './exact-json.ts';
import { bankUrl, type BankHttp, type BankResponse } from './http.ts';
import { bankText, invalidAnswer, objectBody, type JsonObject } from './read.ts';
import type { BankUrls, CollectionClient, CollectionCredentials } from './types.ts';

const PATHS = {
  verifyBySessionId: '/PiPverifyTransaction_sessionid',
  verifyBySettlementId: '/PiPverifyTransaction_settlementid',
  repush: '/PiP_RepushTransaction_SettlementId',
} as const;

/** The answer's amounts: read from their source text, whether the bank writes them as numbers or strings. */
const AMOUNTS = new Set(['transactionAmount', 'settledAmount', 'feeAmount', 'vatAmount']);
/** The bank's "approved": op 17's `responseCode` when it has queued the notification. */
const QUEUED = '00';

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
    return http.call({
      area: 'collection',
      operation,
      method: 'GET',
      url: urlOf(operation, { [param]: asked.id }),
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

type IdField = 'sessionId' | 'settlementId';

function notConfigured(operation: Operation): UpstreamError {
  return new UpstreamError(
    ErrorCode.UPSTREAM_UNAVAILABLE,
    { area: 'collection', operation },
    "The bank's collection service is not configured (BANK_COLLECTION_URL is unset), so transfers cannot be checked with the bank.",
  );
}

/**
 * Ops 15/16's answer: the transfer as the bank holds it, or `null` for the bank's "not known" (HTTP
 * 200 with empty ids, zero amounts and `tranRemarks` "Transaction not found!!!": the empty ids
 * decide it). The spec shows amounts as JSON numbers and allows strings: both are read from the
 * body's text. Fields it does not name are ignored here and kept in `raw`.
 */
function readVerifyAnswer(
  { body, text }: BankResponse,
  asked: { field: IdField; id: string },
  timezone: string,
): BankTransactionRecord | null {
  const answer = objectBody(body, 'verify answer');
  const settlementId = idOf(answer, 'settlementId');
  const sessionId = idOf(answer, 'sessionId');
  if (settlementId === '' && sessionId === '') return null;
  if (settlementId === '') throw invalidAnswer('verify answer.settlementId is empty');
  // An answer about another transfer than the one asked for must never be taken for it.
  const answered = asked.field === 'settlementId' ? settlementId : sessionId;
  if (answered !== asked.id.trim()) throw invalidAnswer(`verify answer.${asked.field} is not the one asked for`);
  const accountNumber = textOf(answer, 'accountNumber');
  if (accountNumber === null) throw invalidAnswer('verify answer.accountNumber is missing');
  const transactionAmount = amountOf(answer, 'transactionAmount');
  if (transactionAmount === null) throw invalidAnswer('verify answer.transactionAmount is missing');
  return {
    sessionId,
    settlementId,
    accountNumber,
    transactionAmount,
    settledAmount: amountOf(answer, 'settledAmount'),
    feeAmount: amountOf(answer, 'feeAmount'),
    vatAmount: amountOf(answer, 'vatAmount'),
    currency: textOf(answer, 'currency'),
    narration: textOf(answer, 'tranRemarks'),
    initiationTranRef: textOf(answer, 'initiationTranRef'),
    sourceAccountNumber: textOf(answer, 'sourceAccountNumber'),
    sourceAccountName: textOf(answer, 'sourceAccountName'),
    sourceBankCode: textOf(answer, 'sourceBankCode'),
    sourceBankName: textOf(answer, 'sourceBankName'),
    channelId: textOf(answer, 'channelId'),
    transactionTime: readBankTime(textOf(answer, 'tranDateTime'), timezone),
    // Seen as `M/D/YYYY h:mm:ss AM`, a form the bank-time reader knows; the other forms are read too.
    settledAt: readBankTime(textOf(answer, 'settlementDateTime'), timezone),
    acknowledged: isAcknowledged(answer.notification_acknowledgement),
    raw: answer,
    rawBody: text,
  };
}

/** Trimmed text, as the webhook reads it: blank, a lone space or the text "null" is absent (`null`). */
function textOf(answer: JsonObject, field: string): string | null {
  const value = answer[field];
  // A number the parser kept as a number (a channel id, say) is taken as its text.
  const text = typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
  return text === '' || text.toLowerCase() === 'null' ? null : text;
}

/** Documented as the number 1 or 0; the text "1" and `true` are taken as 1 too. */
function isAcknowledged(value: unknown): boolean {
  return value === 1 || value === '1' || value === true;
}

/** An id as text: `''` when absent or blank (the bank's "not known" sends them empty). */
function idOf(answer: JsonObject, field: IdField): string {
  return textOf(answer, field) ?? '';
}

/**
 * An amount as exact decimal text (the parser has already turned a JSON number into its source
 * text), `null` when absent or blank. Anything else is refused: an amount is read exactly or not at all.
 */
function amountOf(answer: JsonObject, field: string): string | null {
  const value = answer[field];
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return null;
  if (typeof value !== 'string' || !isAmountWithinDigits(value)) throw invalidAnswer(`verify answer.${field} is not a plain decimal`);
  return value;
}

/**
 * Op 17's answer: `{requestSuccessful, responseCode, responseMessage}`, `00` when queued; anything
 * else is the bank declining, reported rather than thrown. Other fields may come and are ignored.
 */
function readRepushAnswer(body: unknown): RepushRecord {
  const answer = objectBody(body, 'repush answer');
  const code = answer.responseCode;
  const responseCode = typeof code === 'number' ? String(code).padStart(2, '0') : typeof code === 'string' ? code.trim() : '';
  if (responseCode === '') throw invalidAnswer('repush answer.responseCode is missing');
  return {
    queued: responseCode === QUEUED && answer.requestSuccessful !== false,
    responseCode,
    responseMessage: bankText(answer.responseMessage) ?? null,
  };
}
