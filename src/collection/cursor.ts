import type { LogPosition } from '../domain/index.ts';
import { badUserInput } from '../errors.ts';

// Cursors are opaque to clients: base64url of "<log>:<txid>.<seq>", a position in one of the store's
// logs: "p" the notifications' (pages, and incomingTransfer), "c" the log of confirmations
// (incomingTransfer(confirmed: true)). The prefix keeps one log's cursors out of the other; clients
// must not build cursors themselves.
const POSITION = /^([pc]):(\d{1,16})\.(\d{1,16})$/;

/** Which log a cursor is a position in: the notifications' ("p"), or the log of confirmations ("c"). */
export type CursorLog = 'notifications' | 'confirmations';
const PREFIXES: Record<CursorLog, string> = { notifications: 'p', confirmations: 'c' };

/** The opaque cursor of the entry at `position` of `log` (the notifications' unless given). */
export function encodeCursor(position: LogPosition, log: CursorLog = 'notifications'): string {
  return Buffer.from(`${PREFIXES[log]}:${position.txid}.${position.seq}`, 'utf8').toString('base64url');
}

/**
 * The position in `log` that `cursor` stands for; BAD_USER_INPUT naming `argumentName` when it is not
 * one we issued, or is a position in the other log.
 */
export function decodeCursor(cursor: string, argumentName = 'after', log: CursorLog = 'notifications'): LogPosition {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const [prefix, ...digits] = POSITION.exec(text)?.slice(1) ?? [];
  const numbers = digits.map(Number);
  if (numbers.length !== 2 || !numbers.every(Number.isSafeInteger)) {
    throw badUserInput(argumentName, 'is not a cursor this API issued; pass a `cursor` or `endCursor` value unchanged.');
  }
  if (prefix !== PREFIXES[log]) {
    throw badUserInput(
      argumentName,
      log === 'confirmations'
        ? 'is a cursor of the stream of every notification; `incomingTransfer(confirmed: true)` resumes only from a cursor it gave.'
        : 'is a cursor of the confirmed stream (`incomingTransfer(confirmed: true)`), which resumes only there.',
    );
  }
  return { txid: numbers[0]!, seq: numbers[1]! };
}

// A quarantined delivery's cursor: base64url of "q:<id>", apart from the log's by its prefix.
const QUARANTINED = /^q:([1-9]\d{0,14})$/;

/** The opaque cursor of the quarantined delivery `id`. */
export function encodeQuarantineCursor(id: string): string {
  return Buffer.from(`q:${id}`, 'utf8').toString('base64url');
}

/** The quarantine id `cursor` stands for; BAD_USER_INPUT naming `argumentName` when it is not one we issued. */
export function decodeQuarantineCursor(cursor: string, argumentName = 'after'): number {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const id = QUARANTINED.exec(text)?.[1];
  if (id === undefined)
    throw badUserInput(argumentName, 'is not a cursor this API issued; pass a `cursor` or `endCursor` value unchanged.');
  return Number(id);
}
