import { DateTime } from 'luxon';
import type { NewCollectionNotification } from '../domain/index.ts';

/** Every reason a body is refused (code 02); a closed set, fit for a metric label. */
export const REJECTION_REASONS = [
  'body_not_json_object',
  'missing_account_number',
  'invalid_account_number',
  'missing_settlement_id',
  'invalid_settlement_id',
  'missing_transaction_amount',
  'invalid_transaction_amount',
] as const;

/** Why a body was refused. */
export type RejectionReason = (typeof REJECTION_REASONS)[number];

/** A notification ready to store, or why the body was refused (with its sessionId to echo). */
export type ParsedNotification =
  | { ok: true; notification: NewCollectionNotification }
  | { ok: false; sessionId: string; reason: RejectionReason };

type Body = Record<string, unknown>;

const ACCOUNT_NUMBER = /^\d{10}$/;
// Amounts are text in the spec: no sign, exponent, spaces or separators, so the value is exact.
const PLAIN_DECIMAL = /^\d+(\.\d+)?$/;
/** The bank's forms of `tranDateTime` (luxon tokens); `a` matches AM/PM in any case. */
const BANK_TIME_FORMATS = ['yyyy-MM-dd HH:mm:ss', 'yyyy-MM-dd HH:mm:ss.SSS', 'M/d/yyyy h:mm:ss a'] as const;
// luxon's `h` takes any one or two digits; on a 12-hour clock only 1 to 12 are hours.
const TWELVE_HOUR_CLOCK = / (?:[1-9]|1[0-2]):\d\d:\d\d [ap]m$/i;

/**
 * Reads a collection notification body (op 14): checks the fields the contract requires, then
 * normalises the rest. Optional fields never cause a refusal; what cannot be read becomes null.
 */
export function parseNotification(
  rawBody: string,
  options: { timezone: string; receivedAt: Date },
): ParsedNotification {
  const body = readJsonObject(rawBody);
  if (!body) return { ok: false, sessionId: '', reason: 'body_not_json_object' };
  const sessionId = typeof body.sessionId === 'string' ? body.sessionId : '';
  const required = readRequired(body);
  if ('reason' in required) return { ok: false, sessionId, reason: required.reason };

  return {
    ok: true,
    notification: {
      ...required,
      sessionId: withoutNul(sessionId),
      settledAmount: optionalAmount(body.settledAmount),
      feeAmount: optionalAmount(body.feeAmount),
      vatAmount: optionalAmount(body.vatAmount),
      currency: optionalText(body.currency),
      narration: optionalText(body.tranRemarks),
      initiationTranRef: optionalText(body.initiationTranRef),
      sourceAccountNumber: optionalText(body.sourceAccountNumber),
      sourceAccountName: optionalText(body.sourceAccountName),
      sourceBankName: optionalText(body.sourceBankName),
      channelId: optionalText(body.channelId),
      transactionTime: readBankTime(optionalText(body.tranDateTime), options.timezone),
      receivedAt: options.receivedAt.toISOString(),
      rawBody,
    },
  };
}

/** The body's sessionId, to echo in the reply; `''` when the body has none it can read. */
export function readSessionId(rawBody: string): string {
  const sessionId = readJsonObject(rawBody)?.sessionId;
  return typeof sessionId === 'string' ? sessionId : '';
}

/**
 * The three fields a notification cannot do without, or the first reason it fails. The sessionId
 * is echoed verbatim, so it is not among the trimmed strings.
 */
function readRequired(
  body: Body,
): { accountNumber: string; settlementId: string; transactionAmount: string } | { reason: RejectionReason } {
  const accountNumber = requiredText(body.accountNumber);
  if (accountNumber === undefined) return { reason: 'missing_account_number' };
  if (accountNumber === null || !ACCOUNT_NUMBER.test(accountNumber)) return { reason: 'invalid_account_number' };

  const settlementId = requiredText(body.settlementId);
  if (settlementId === undefined) return { reason: 'missing_settlement_id' };
  // A NUL cannot be stored (PostgreSQL text), and silently dropping it would change the duplicate key.
  if (settlementId === null || String(body.settlementId).includes('\u0000')) return { reason: 'invalid_settlement_id' };

  // Not trimmed: an amount is taken exactly as sent or not at all.
  const amount = body.transactionAmount;
  if (requiredText(amount) === undefined) return { reason: 'missing_transaction_amount' };
  if (typeof amount !== 'string' || !PLAIN_DECIMAL.test(amount)) return { reason: 'invalid_transaction_amount' };

  return { accountNumber, settlementId, transactionAmount: amount };
}

/** Trimmed text; undefined when absent, null, blank or "null"; null when not a string at all. */
function requiredText(value: unknown): string | null | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return null;
  return optionalText(value) ?? undefined;
}

/** Trimmed text, or null for anything else, blank, or the text "null" (in any case). */
function optionalText(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = withoutNul(value).trim();
  return text === '' || text.toLowerCase() === 'null' ? null : text;
}

/** An amount kept verbatim when it is a plain decimal; otherwise null, never a refusal. */
function optionalAmount(value: unknown): string | null {
  return typeof value === 'string' && PLAIN_DECIMAL.test(value) ? value : null;
}

function readJsonObject(rawBody: string): Body | undefined {
  try {
    // A leading byte-order mark is tolerated for parsing; rawBody itself is kept as sent.
    const value: unknown = JSON.parse(rawBody.replace(/^\uFEFF/, ''));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Body) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The bank's local `tranDateTime` as ISO 8601 with the zone's offset at that instant, or null when
 * unreadable. Forms: `YYYY-MM-DD HH:MM:SS[.fff]` and `M/D/YYYY h:mm:ss AM|PM`. Milliseconds are
 * written only when given.
 */
export function readBankTime(text: string | null, timezone: string): string | null {
  if (text === null) return null;
  for (const format of BANK_TIME_FORMATS) {
    // The fields as written (read in UTC, where no time is skipped), then placed in the zone.
    // en-US: the meridiem is AM/PM whatever the host's locale.
    const wallClock = DateTime.fromFormat(text, format, { zone: 'utc', locale: 'en-US' });
    if (!wallClock.isValid) continue;
    if (format.endsWith(' a') && !TWELVE_HOUR_CLOCK.test(text)) return null;
    const time = DateTime.fromObject(wallClock.toObject(), { zone: timezone });
    // A wall-clock time skipped by a DST change does not exist; luxon would move it silently.
    if (!time.isValid || time.hour !== wallClock.hour || time.minute !== wallClock.minute) return null;
    return time.toISO({ suppressMilliseconds: !format.endsWith('.SSS') });
  }
  return null;
}

/**
 * The text without NUL characters, which PostgreSQL text cannot hold: left in, such a notification
 * would fail with 03 on every retry of the bank. The raw body keeps them (escaped, as JSON must).
 */
function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
}
