import { badUserInput } from '../errors.ts';

// Cursors are opaque to clients: base64url of "n:<seq>". The prefix lets a future format sit
// beside this one; clients must not build cursors themselves.
const PREFIX = 'n:';

/** The opaque cursor of the notification stored at position `seq`. */
export function encodeCursor(seq: number): string {
  return Buffer.from(`${PREFIX}${seq}`, 'utf8').toString('base64url');
}

/** The position a cursor stands for; BAD_USER_INPUT naming `argumentName` when it is not ours. */
export function decodeCursor(cursor: string, argumentName = 'after'): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const seq = text.startsWith(PREFIX) ? Number(text.slice(PREFIX.length)) : Number.NaN;
  if (!/^[A-Za-z0-9_-]+$/.test(cursor) || !Number.isSafeInteger(seq) || seq < 0) {
    throw badUserInput(argumentName, 'is not a cursor this API issued; pass a `cursor` or `endCursor` value unchanged.');
  }
  return seq;
}
