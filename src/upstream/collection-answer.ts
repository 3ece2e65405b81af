/**
 * The collection service's answers read into the domain's records. Only an answer about the transfer
 * asked is a verdict: its record, or the documented not-found answer. Anything else (an error
 * envelope, an empty or wrapped object, a record about another transfer, an amount that cannot be
 * read exactly) is refused, so the caller sees a failed ask and never decides on it.
 */
import { decimalValue, isAmountWithinDigits, readBankTime, type BankTransactionRecord, type RepushRecord } from '../domain/index.ts';
import type { BankResponse } from './http.ts';
import { plainAmount } from './exact-json.ts';
import { bankText, invalidAnswer, objectBody, rejectedAnswer, type JsonObject } from './read.ts';

/** The answer's amounts: read from their source text, whether the bank writes them as numbers or strings. */
export const AMOUNTS: ReadonlySet<string> = new Set(['transactionAmount', 'settledAmount', 'feeAmount', 'vatAmount']);
/** The bank's "approved". */
const APPROVED = '00';
/** The documented not-found remarks are "Transaction not found!!!"; read in any case and punctuation. */
const NOT_FOUND_REMARKS = /not found/i;

export type IdField = 'sessionId' | 'settlementId';

/**
 * Ops 15/16's answer: the transfer as the bank holds it, or `null` for the bank's documented "not
 * known" (HTTP 200, both ids present and empty, `tranRemarks` saying not found). The spec shows
 * amounts as JSON numbers and allows strings: both are read from the body's text. Fields it does not
 * name are ignored here and kept in `raw`.
 */
export function readVerifyAnswer(
  { body, text }: BankResponse,
  asked: { field: IdField; id: string },
  timezone: string,
): BankTransactionRecord | null {
  const answer = objectBody(body, 'verify answer');
  refuseEnvelope(answer);
  const settlementId = idOf(answer, 'settlementId');
  const sessionId = idOf(answer, 'sessionId');
  if (settlementId === '' && sessionId === '') {
    if (isNotFound(answer)) return null;
    // `{}`, or the record under a wrapper (`{"data": {...}}`): the spec documents the record at the
    // top and no wrapper, so a body without both ids and the not-found remarks is "an empty or
    // unreadable object", a failed ask. Unwrapping a guessed wrapper could take someone else's word.
    throw invalidAnswer('verify answer holds neither a transfer nor the not-found answer');
  }
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

/**
 * Many gateways in front of a bank answer their own failure with HTTP 200 and an envelope
 * (`{"requestSuccessful":false,"responseCode":"96"}`): the bank declined or could not answer, so
 * it says nothing of the transfer. A record may carry `responseCode` `00` and `requestSuccessful: true`.
 */
function refuseEnvelope(answer: JsonObject): void {
  const responseCode = codeOf(answer.responseCode);
  const unsuccessful = answer.requestSuccessful === false || String(answer.requestSuccessful).trim().toLowerCase() === 'false';
  if (unsuccessful || (responseCode !== undefined && responseCode !== APPROVED)) {
    throw rejectedAnswer(responseCode, bankText(answer.responseMessage));
  }
}

/** The documented not-found answer: both ids present and blank (or null), the remarks saying so. */
function isNotFound(answer: JsonObject): boolean {
  const blank = (value: unknown) => value === null || (typeof value === 'string' && value.trim() === '');
  const remarks = answer.tranRemarks;
  return blank(answer.sessionId) && blank(answer.settlementId) && typeof remarks === 'string' && NOT_FOUND_REMARKS.test(remarks);
}

/** The bank's `responseCode` as text (`96` written as a number is `"96"`), `undefined` when absent or blank. */
function codeOf(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value).padStart(2, '0');
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  return undefined;
}

/** Trimmed text, as the webhook reads it: blank, a lone space or the text "null" is absent (`null`). */
function textOf(answer: JsonObject, field: string): string | null {
  const value = answer[field];
  // A number the parser kept as a number (a channel id, say) is taken as its text.
  const text = typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
  return text === '' || text.toLowerCase() === 'null' ? null : text;
}

/** An id as trimmed text: `''` when absent or blank (the bank's "not known" sends them empty). */
function idOf(answer: JsonObject, field: IdField): string {
  return textOf(answer, field) ?? '';
}

/**
 * Documented as the number 1 or 0. A Java writer may send `1.0` (kept as its text by the parser),
 * and a string or a boolean is taken the same way: `1`, `1.0`, `"1"`, `"1.0"` and `true` are true.
 */
function isAcknowledged(value: unknown): boolean {
  if (value === true || value === 1) return true;
  if (typeof value !== 'string') return false;
  const plain = plainAmount(value);
  return plain !== undefined && decimalValue(plain) === '1';
}

/**
 * An amount as exact plain decimal text (`plainAmount`: a number's source text or a string, spaces,
 * exponent and negative zero allowed), `null` when absent or blank. Anything else is refused: an
 * amount is read exactly or not at all.
 */
function amountOf(answer: JsonObject, field: string): string | null {
  const value = answer[field];
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return null;
  const plain = typeof value === 'string' ? plainAmount(value) : undefined;
  if (plain === undefined || !isAmountWithinDigits(plain)) throw invalidAnswer(`verify answer.${field} is not a decimal amount`);
  return plain;
}

/**
 * Op 17's answer: `{requestSuccessful, responseCode, responseMessage}`, `00` when queued; anything
 * else is the bank declining, reported rather than thrown. Other fields may come and are ignored.
 */
export function readRepushAnswer(body: unknown): RepushRecord {
  const answer = objectBody(body, 'repush answer');
  const responseCode = codeOf(answer.responseCode);
  if (responseCode === undefined) throw invalidAnswer('repush answer.responseCode is missing');
  return {
    queued: responseCode === APPROVED && answer.requestSuccessful !== false,
    responseCode,
    responseMessage: bankText(answer.responseMessage) ?? null,
  };
}
