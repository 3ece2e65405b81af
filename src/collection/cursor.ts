import type { LogPosition } from '../domain/index.ts';
import { badUserInput } from '../errors.ts';

// Cursors are opaque to clients: base64url of "p:<txid>.<seq>", a notification's log position. The
// prefix lets a future format sit beside this one; clients must not build cursors themselves.
const PREFIX = 'p:';
const POSITION = /^p:(\d{1,16})\.(\d{1,16})$/;

/** The opaque cursor of the notification at `position`. */
export function encodeCursor(position: LogPosition): string {
  return Buffer.from(`${PREFIX}${position.txid}.${position.seq}`, 'utf8').toString('base64url');
}

/** The log position `cursor` stands for; BAD_USER_INPUT naming `argumentName` when it is not ours. */
export function decodeCursor(cursor: string, argumentName = 'after'): LogPosition {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const numbers = (POSITION.exec(text)?.slice(1) ?? []).map(Number);
  if (numbers.length !== 2 || !numbers.every(Number.isSafeInteger)) {
    throw badUserInput(argumentName, 'is not a cursor this API issued; pass a `cursor` or `endCursor` value unchanged.');
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
