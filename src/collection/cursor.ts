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
