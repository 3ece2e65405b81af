import { isAmountWithinDigits, MAX_ID_LENGTH, PLAIN_DECIMAL, type NewCollectionNotification } from '../domain/index.ts';
import { readBankTime } from '../domain/bank-time.ts';
import { parseWithSource } from '../upstream/exact-json.ts';
import { duplicateKeyOf, MAX_BODY_DEPTH, nestsDeeperThan } from './body-scan.ts';

/** Every reason a body is refused (code 02); a closed set, fit for a metric label. */
export const REJECTION_REASONS = [
  'body_not_json_object',
  'body_too_deep',
  'duplicate_key',
  'missing_account_number',
  'invalid_account_number',
  'missing_settlement_id',
  'invalid_settlement_id',
  'invisible_character_in_id',
  'id_not_printable_ascii',
  'missing_transaction_amount',
  'invalid_transaction_amount',
  'invalid_amount',
  'settlement_id_too_long',
  'session_id_too_long',
  'amount_too_long',
] as const;

/** Why a body was refused. */
export type RejectionReason = (typeof REJECTION_REASONS)[number];

/** A notification ready to store, or why the body was refused (with its sessionId to echo, and what the reason leaves out). */
export type ParsedNotification =
  | { ok: true; notification: NewCollectionNotification }
  | { ok: false; sessionId: string; reason: RejectionReason; detail?: string | undefined };

type Body = Record<string, unknown>;

const ACCOUNT_NUMBER = /^\d{10}$/;
/**
 * What an id may not hold: a control, format or invisible character (NUL, a zero-width space, a
 * byte-order mark, a bidi control, a space other than U+0020…), a lone surrogate, or U+FFFD (a byte
 * that was not UTF-8). Two ids that print alike must be one id.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\ufffd]|(?! )\p{Zs}/u;
/**
 * What an id may hold at all: printable ASCII without spaces (the bank's are digits). A letter that
 * prints like another (a Cyrillic Ѕ, an É composed or decomposed) would make a second id of one.
 */
const NOT_PRINTABLE_ASCII = /[^\x21-\x7e]/u;
/** The ids a body may send as JSON numbers: read from their text, never through a double. */
const ID_KEYS: ReadonlySet<string> = new Set(['settlementId', 'sessionId']);
/** The optional amounts: kept when readable, null when not, refused when they could not be stored. */
const OPTIONAL_AMOUNTS = ['settledAmount', 'feeAmount', 'vatAmount'] as const;

/** A webhook body read once: as sent, its JSON object (undefined when it is none) and its sessionId. */
export interface NotificationBody {
  raw: string;
  /** The body's object, its ids sent as JSON numbers given as their text. */
  fields: Body | undefined;
  /** Whether it nests arrays and objects deeper than MAX_BODY_DEPTH: then nothing else of it is checked. */
  tooDeep: boolean;
  /** A key one object of the body holds twice (JSON.parse kept the last), undefined when none is. */
  duplicateKey: string | undefined;
  /** The sessionId to echo in the reply; `''` when the body has none it can read. */
  sessionId: string;
}

/**
 * Reads a body's JSON once, for the reply's sessionId and for parseNotification alike. Every step is
 * bounded whatever the body holds: JSON.parse keeps a stack of its own (a test pins it), the depth
 * is measured without recursion before anything walks the object, and the one recursive step
 * (JSON.parse's reviver, for ids sent as numbers) runs only on a body within the depth.
 */
export function readNotificationBody(raw: string): NotificationBody {
  let fields = readJsonObject(raw);
  const tooDeep = fields !== undefined && nestsDeeperThan(fields, MAX_BODY_DEPTH);
  const duplicateKey = fields && !tooDeep ? duplicateKeyOf(raw, fields) : undefined;
  if (fields && !tooDeep && (typeof fields.settlementId === 'number' || typeof fields.sessionId === 'number'))
    fields = { ...fields, ...idsAsText(raw) };
  return { raw, fields, tooDeep, duplicateKey, sessionId: typeof fields?.sessionId === 'string' ? fields.sessionId : '' };
}

/** The body's top-level ids that are JSON numbers, each as its source text (`12345678901234567890` stays that). */
function idsAsText(raw: string): Body {
  const top = parseWithSource(withoutByteOrderMark(raw), function (this: unknown, key, value, context) {
    return ID_KEYS.has(key) && typeof value === 'number' && context.source !== undefined ? context.source : value;
  }) as Body;
  return Object.fromEntries([...ID_KEYS].filter((key) => typeof top[key] === 'string').map((key) => [key, top[key]]));
}

/** The body's sessionId, to echo in the reply; `''` when the body has none it can read. */
export function readSessionId(rawBody: string): string {
  return readNotificationBody(rawBody).sessionId;
}

/**
 * Reads a collection notification body (op 14): checks the fields the contract requires, then
 * normalises the rest. Optional fields become null when absent, blank or "null"; an optional amount
 * given otherwise must be as plain as transactionAmount, or the body is refused.
 */
export function parseNotification(input: string | NotificationBody, options: { timezone: string; receivedAt: Date }): ParsedNotification {
  const { raw: rawBody, fields: body, tooDeep, sessionId, duplicateKey } = typeof input === 'string' ? readNotificationBody(input) : input;
  if (!body) return { ok: false, sessionId: '', reason: 'body_not_json_object' };
  if (tooDeep) return { ok: false, sessionId, reason: 'body_too_deep', detail: `it nests more than ${MAX_BODY_DEPTH} levels deep` };
  // Parsers disagree on which of the two values wins: money must not depend on that.
  if (duplicateKey !== undefined)
    return { ok: false, sessionId, reason: 'duplicate_key', detail: `the key "${duplicateKey}" is given twice` };
  const required = readRequired(body);
  if ('reason' in required) return { ok: false, sessionId, reason: required.reason, detail: required.detail };

  return {
    ok: true,
    notification: {
      ...required,
      sessionId,
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
): { accountNumber: string; settlementId: string; transactionAmount: string } | { reason: RejectionReason; detail?: string } {
  const accountNumber = requiredText(body.accountNumber);
  if (accountNumber === undefined) return { reason: 'missing_account_number' };
  if (accountNumber === null || !ACCOUNT_NUMBER.test(accountNumber)) return { reason: 'invalid_account_number' };

  const settlementId = requiredText(body.settlementId);
  if (settlementId === undefined) return { reason: 'missing_settlement_id' };
  if (settlementId === null) return { reason: 'invalid_settlement_id' };
  // Checked as sent, before trimming: a NUL or a zero-width space would make a second id that prints as the first.
  for (const name of ['settlementId', 'sessionId'] as const) {
    const invisible = typeof body[name] === 'string' ? INVISIBLE.exec(body[name]) : null;
    if (invisible) return { reason: 'invisible_character_in_id', detail: `${name} holds ${codePointOf(invisible[0])}` };
  }
  // The settlementId as stored (trimmed), the sessionId as stored and echoed (as sent).
  const sessionId = typeof body.sessionId === 'string' ? body.sessionId : '';
  for (const [name, id] of [
    ['settlementId', settlementId],
    ['sessionId', sessionId],
  ] as const) {
    const unprintable = NOT_PRINTABLE_ASCII.exec(id);
    if (unprintable) return { reason: 'id_not_printable_ascii', detail: `${name} holds ${codePointOf(unprintable[0])}` };
  }
  // Longer, a store could refuse it on every retry: refused on arrival (02), on both stores alike.
  if (settlementId.length > MAX_ID_LENGTH) return { reason: 'settlement_id_too_long' };
  if (sessionId.length > MAX_ID_LENGTH) return { reason: 'session_id_too_long' };

  // Not trimmed: an amount is taken exactly as sent or not at all.
  const amount = body.transactionAmount;
  if (requiredText(amount) === undefined) return { reason: 'missing_transaction_amount' };
  if (typeof amount !== 'string' || !PLAIN_DECIMAL.test(amount)) return { reason: 'invalid_transaction_amount' };
  // An optional amount may be left out (absent, blank, "null"); one given is money like the first:
  // dropping an unreadable fee would store a transfer the bank's record says otherwise of.
  for (const name of OPTIONAL_AMOUNTS) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') return { reason: 'invalid_amount', detail: `${name} is not decimal text` };
    if (optionalText(value) === null) continue;
    if (!PLAIN_DECIMAL.test(value)) return { reason: 'invalid_amount', detail: `${name} is not a plain non-negative decimal` };
  }
  // Every amount the store would keep must fit it.
  const amounts = [amount, ...OPTIONAL_AMOUNTS.map((name) => optionalAmount(body[name]))];
  if (amounts.some((value) => value !== null && !isAmountWithinDigits(value))) return { reason: 'amount_too_long' };

  return { accountNumber, settlementId, transactionAmount: amount };
}

/** `U+0415`: how a refusal names a character. */
function codePointOf(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
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

/** An optional amount kept verbatim; null when left out (readRequired refused any other). */
function optionalAmount(value: unknown): string | null {
  return typeof value === 'string' && PLAIN_DECIMAL.test(value) ? value : null;
}

/** A leading byte-order mark is tolerated for parsing; rawBody itself is kept as sent. */
function withoutByteOrderMark(rawBody: string): string {
  return rawBody.charCodeAt(0) === 0xfeff ? rawBody.slice(1) : rawBody;
}

function readJsonObject(rawBody: string): Body | undefined {
  try {
    const value: unknown = JSON.parse(withoutByteOrderMark(rawBody));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Body) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The text without NUL characters, which PostgreSQL text cannot hold: left in, such a notification
 * would fail with 03 on every retry of the bank. The raw body keeps them (escaped, as JSON must).
 */
function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
}
