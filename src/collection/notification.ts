import { DateTime, FixedOffsetZone } from 'luxon';
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
// en-US: the meridiem is AM/PM whatever the host's locale.
const LOCALE = 'en-US';
/**
 * The bank's forms of `tranDateTime` (luxon tokens; `a` matches AM/PM in any case), each parser
 * built once: building one per call was most of the webhook's CPU time.
 */
const BANK_TIME_FORMATS = [
  { tokens: 'yyyy-MM-dd HH:mm:ss', milliseconds: false, twelveHour: false },
  { tokens: 'yyyy-MM-dd HH:mm:ss.SSS', milliseconds: true, twelveHour: false },
  { tokens: 'M/d/yyyy h:mm:ss a', milliseconds: false, twelveHour: true },
].map((format) => ({ ...format, parser: DateTime.buildFormatParser(format.tokens, { locale: LOCALE }) }));
// luxon's `h` takes any one or two digits; on a 12-hour clock only 1 to 12 are hours.
const TWELVE_HOUR_CLOCK = / (?:[1-9]|1[0-2]):\d\d:\d\d [ap]m$/i;

/** A webhook body read once: as sent, its JSON object (undefined when it is none) and its sessionId. */
export interface NotificationBody {
  raw: string;
  fields: Body | undefined;
  /** The sessionId to echo in the reply; `''` when the body has none it can read. */
  sessionId: string;
}

/** Reads a body's JSON once, for the reply's sessionId and for parseNotification alike. */
export function readNotificationBody(raw: string): NotificationBody {
  const fields = readJsonObject(raw);
  return { raw, fields, sessionId: typeof fields?.sessionId === 'string' ? fields.sessionId : '' };
}

/** The body's sessionId, to echo in the reply; `''` when the body has none it can read. */
export function readSessionId(rawBody: string): string {
  return readNotificationBody(rawBody).sessionId;
}

/**
 * Reads a collection notification body (op 14): checks the fields the contract requires, then
 * normalises the rest. Optional fields never cause a refusal; what cannot be read becomes null.
 */
export function parseNotification(
  input: string | NotificationBody,
  options: { timezone: string; receivedAt: Date },
): ParsedNotification {
  const { raw: rawBody, fields: body, sessionId } = typeof input === 'string' ? readNotificationBody(input) : input;
  if (!body) return { ok: false, sessionId: '', reason: 'body_not_json_object' };
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
    const value: unknown = JSON.parse(rawBody.charCodeAt(0) === 0xfeff ? rawBody.slice(1) : rawBody);
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
    // The fields as written, read in UTC (where no time is skipped), then given the zone's offset.
    const wallClock = DateTime.fromFormatParser(text, format.parser, { zone: 'utc', locale: LOCALE });
    if (!wallClock.isValid) continue;
    if (format.twelveHour && !TWELVE_HOUR_CLOCK.test(text)) return null;
    const offset = zoneOffsetAt(wallClock, timezone);
    if (offset === null) return null;
    return wallClock
      .setZone(FixedOffsetZone.instance(offset), { keepLocalTime: true })
      .toISO({ suppressMilliseconds: !format.milliseconds });
  }
  return null;
}

/** Offsets already worked out, by zone and wall-clock minute; null for a minute a DST change skips. */
const offsetsByMinute = new Map<string, number | null>();
/** Bank times cluster around now, so a few thousand minutes cover any real stream of deliveries. */
const OFFSET_CACHE_LIMIT = 4_096;

/**
 * The zone's UTC offset in minutes at the wall-clock time `wallClock` (its fields read as local to
 * `timezone`), or null when that time does not exist there. Asking the zone (Intl) is slow, and
 * zones change offset only on a whole minute, so the answer is kept per wall-clock minute.
 */
function zoneOffsetAt(wallClock: DateTime<true>, timezone: string): number | null {
  const key = `${timezone} ${Math.floor(wallClock.toMillis() / 60_000)}`;
  const known = offsetsByMinute.get(key);
  if (known !== undefined) return known;
  const time = DateTime.fromObject(wallClock.toObject(), { zone: timezone });
  // A wall-clock time skipped by a DST change does not exist; luxon would move it silently.
  const offset = time.isValid && time.hour === wallClock.hour && time.minute === wallClock.minute ? time.offset : null;
  if (offsetsByMinute.size >= OFFSET_CACHE_LIMIT) offsetsByMinute.clear();
  offsetsByMinute.set(key, offset);
  return offset;
}

/**
 * The text without NUL characters, which PostgreSQL text cannot hold: left in, such a notification
 * would fail with 03 on every retry of the bank. The raw body keeps them (escaped, as JSON must).
 */
function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
}
