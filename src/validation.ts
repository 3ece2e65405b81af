import { DateTime } from 'luxon';
import type { TransferId, TransferIdKind } from './domain/index.ts';
import { badUserInput } from './errors.ts';

// Our own checks on arguments, run before any upstream call so the bank never sees input we know
// it would refuse. Each returns the value to use (trimmed where that is safe) or throws
// BAD_USER_INPUT naming the argument.

/** A 10-digit NUBAN account number (given as a string: an entity reference's key may be anything). */
export function accountNumber(value: unknown, name = 'accountNumber'): string {
  const trimmed = typeof value === 'string' ? value.trim() : '';
  if (!/^\d{10}$/.test(trimmed)) throw badUserInput(name, 'must be a 10-digit account number (NUBAN).');
  return trimmed;
}

/** A bank code: digits only (the bank list's codes have 6), given as a string. */
export function bankCode(value: unknown, name = 'bankCode'): string {
  const trimmed = typeof value === 'string' ? value.trim() : '';
  if (!/^\d{1,10}$/.test(trimmed)) throw badUserInput(name, 'must be a bank code of digits only, such as "000023".');
  return trimmed;
}

/** A settlementId as the webhook stores them: a string of at most 64 characters, not empty. */
export function settlementId(value: unknown, name = 'settlementId'): string {
  if (typeof value !== 'string' || value === '' || value.length > 64)
    throw badUserInput(name, 'must be a settlementId: a string of 1 to 64 characters.');
  return value;
}

/** An 11-digit Bank Verification Number. */
export function bvn(value: string, name = 'number'): string {
  const trimmed = value.trim();
  if (!/^\d{11}$/.test(trimmed)) throw badUserInput(name, 'must be an 11-digit BVN.');
  return trimmed;
}

/** A bill category id: a positive whole number. */
export function categoryId(value: number, name = 'categoryId'): number {
  if (!Number.isSafeInteger(value) || value < 1) throw badUserInput(name, 'must be a positive whole number.');
  return value;
}

/** An absolute http(s) URL, as OAuth redirect URIs must be. */
export function redirectUri(value: string, name = 'redirectUri'): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw badUserInput(name, 'must be an absolute http(s) URL, such as "https://app.example.com/oauth/callback".');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw badUserInput(name, 'must be an absolute http(s) URL.');
  }
  return value.trim();
}

/** An e-mail address, checked only for its shape; the bank decides whether it exists. */
export function email(value: string, name = 'email'): string {
  const trimmed = value.trim();
  if (!/^[^\s@]+@[^\s@]+$/.test(trimmed) || trimmed.length > 320) {
    throw badUserInput(name, 'must be an e-mail address.');
  }
  return trimmed;
}

/** A value the caller must not leave empty (tokens, codes, passwords); passed on unchanged. */
export function required(value: string, name: string): string {
  if (value.trim() === '') throw badUserInput(name, 'must not be empty.');
  return value;
}

/** A page size: 0 to `max`, `fallback` when not given. */
export function pageSize(value: number | null | undefined, fallback: number, max: number, name = 'first'): number {
  if (value === null || value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    throw badUserInput(name, `must be a whole number from 0 to ${max}.`);
  }
  return value;
}

const DAY_MS = 86_400_000;

/**
 * An ISO 8601 instant as a Date. The DateTime scalar checked its form; this checks the calendar
 * (no 30 February). Stored times carry milliseconds, so a finer instant is rounded up to the next
 * millisecond: `time >= from` and `time < to` then hold exactly as they would at full precision.
 */
export function instant(value: string, name: string): Date {
  const time = DateTime.fromISO(value, { setZone: true });
  if (!time.isValid) throw badUserInput(name, 'must be a real date and time, such as "2026-11-22T09:00:00+01:00".');
  const finer = /\.\d{3}(\d+)/.exec(value)?.[1] ?? '';
  return new Date(time.toMillis() + (/[1-9]/.test(finer) ? 1 : 0));
}

/** The range [from, to): `to` after `from`, and at most `maxDays` days after it. */
export function timeRange(from: string, to: string, maxDays: number): { from: Date; to: Date } {
  const range = { from: instant(from, 'from'), to: instant(to, 'to') };
  if (range.to <= range.from) throw badUserInput('to', 'must be after `from`: the range is [from, to).');
  if (range.to.getTime() - range.from.getTime() > maxDays * DAY_MS) {
    throw badUserInput('to', `must be at most ${maxDays} days after \`from\`; ask for a longer period in parts.`);
  }
  return range;
}

/**
 * The range of a page: nothing, `from` alone (everything since), or [from, to) as `timeRange` checks
 * it. `to` alone is refused: everything before an instant has no bound a query could keep to.
 */
export function pageRange(from: string | null | undefined, to: string | null | undefined, maxDays: number): { from?: Date; to?: Date } {
  if (to != null) {
    if (from == null) throw badUserInput('from', 'must be given with `to`: the range is [from, to).');
    return timeRange(from, to, maxDays);
  }
  return from == null ? {} : { from: instant(from, 'from') };
}

/** Either end of [from, to) may be open; with both, `to` after `from`. No length bound: what it reads is a page. */
export function openRange(from: string | null | undefined, to: string | null | undefined): { from?: Date; to?: Date } {
  const range = { ...(from == null ? {} : { from: instant(from, 'from') }), ...(to == null ? {} : { to: instant(to, 'to') }) };
  if (range.from !== undefined && range.to !== undefined && range.to <= range.from)
    throw badUserInput('to', 'must be after `from`: the range is [from, to).');
  return range;
}

/** The longest review note: a paragraph, not a document. */
export const MAX_NOTE_LENGTH = 2_000;

/** A note of what was done: not blank, at most MAX_NOTE_LENGTH characters, no NUL; trimmed. */
export function note(value: string, name = 'note', blank = 'must say what was done; it may not be blank.'): string {
  const trimmed = value.trim();
  if (trimmed === '') throw badUserInput(name, blank);
  if (trimmed.length > MAX_NOTE_LENGTH) throw badUserInput(name, `must be at most ${MAX_NOTE_LENGTH} characters.`);
  if (trimmed.includes('\u0000')) throw badUserInput(name, 'may not contain a NUL character.');
  return trimmed;
}

/** The longest id a transfer is asked about by: the webhook's bound on a settlementId. */
const MAX_TRANSFER_ID_LENGTH = 64;
/** The most ids one `reconcileCollections` checks. */
export const MAX_RECONCILE_IDS = 200;

/** One id of a transfer, trimmed: not blank, at most MAX_TRANSFER_ID_LENGTH characters. */
function transferIdText(value: string, name: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw badUserInput(name, 'must not be blank.');
  if (trimmed.length > MAX_TRANSFER_ID_LENGTH) throw badUserInput(name, `must be at most ${MAX_TRANSFER_ID_LENGTH} characters.`);
  return trimmed;
}

/** Exactly one of a transfer's two ids: `bankTransaction`'s arguments. */
export function transferId(args: { sessionId?: string | null | undefined; settlementId?: string | null | undefined }): TransferId {
  const { sessionId, settlementId } = args;
  if (sessionId != null && settlementId != null)
    throw badUserInput('sessionId', 'and settlementId were both given: ask about a transfer by one of the two.');
  if (sessionId != null) return { kind: 'sessionId', id: transferIdText(sessionId, 'sessionId') };
  if (settlementId != null) return { kind: 'settlementId', id: transferIdText(settlementId, 'settlementId') };
  throw badUserInput('settlementId', 'or sessionId is needed: ask about a transfer by one of the two.');
}

/** Exactly one list of a transfer's ids, 1 to MAX_RECONCILE_IDS of them: `reconcileCollections`' arguments. */
export function transferIds(args: {
  sessionIds?: readonly string[] | null | undefined;
  settlementIds?: readonly string[] | null | undefined;
}): {
  kind: TransferIdKind;
  ids: string[];
} {
  const { sessionIds, settlementIds } = args;
  if (sessionIds != null && settlementIds != null)
    throw badUserInput('sessionIds', 'and settlementIds were both given: send the ids of one kind per call.');
  const [kind, given] = sessionIds != null ? (['sessionId', sessionIds] as const) : (['settlementId', settlementIds] as const);
  if (given == null) throw badUserInput('settlementIds', 'or sessionIds is needed: the ids to check with the bank.');
  const name = `${kind}s`;
  if (given.length === 0 || given.length > MAX_RECONCILE_IDS) {
    throw badUserInput(name, `must hold 1 to ${MAX_RECONCILE_IDS} ids, not ${given.length}: send more in several calls.`);
  }
  return { kind, ids: given.map((id, index) => transferIdText(id, `${name}[${index}]`)) };
}
