import { START_OF_LOG, type LogPosition } from '../domain/index.ts';
import { badUserInput } from '../errors.ts';
import type { NotificationStore } from '../store/types.ts';

// Cursors are opaque to clients: base64url of "p:<txid>.<seq>", a notification's log position.
// Earlier releases issued "n:<seq>", when seq alone was the position; clients may still hold them.
// The prefix lets a future format sit beside these; clients must not build cursors themselves.
const PREFIX = 'p:';
const LEGACY_PREFIX = 'n:';
const POSITION = /^p:(\d{1,16})\.(\d{1,16})$/;
const LEGACY = /^n:(\d{1,16})$/;

/** The opaque cursor of the notification at `position`. */
export function encodeCursor(position: LogPosition): string {
  return Buffer.from(`${PREFIX}${position.txid}.${position.seq}`, 'utf8').toString('base64url');
}

/** What a cursor names: a position, or, in a cursor of an earlier release, only a seq. */
export type DecodedCursor = { position: LogPosition } | { legacySeq: number };

/** What `cursor` names; BAD_USER_INPUT naming `argumentName` when it is not ours. */
export function decodeCursor(cursor: string, argumentName = 'after'): DecodedCursor {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const position = text.startsWith(PREFIX) ? POSITION.exec(text) : null;
  const legacy = text.startsWith(LEGACY_PREFIX) ? LEGACY.exec(text) : null;
  const numbers = (position?.slice(1) ?? legacy?.slice(1) ?? []).map(Number);
  if (numbers.length === 0 || !numbers.every(Number.isSafeInteger)) {
    throw badUserInput(argumentName, 'is not a cursor this API issued; pass a `cursor` or `endCursor` value unchanged.');
  }
  return position ? { position: { txid: numbers[0]!, seq: numbers[1]! } } : { legacySeq: numbers[0]! };
}

/**
 * The log position `cursor` stands for. A cursor of an earlier release holds only the seq: its
 * notification's position is looked up. When no notification has that seq any more (archived, say),
 * the answer is (0, seq): rows stored before positions had a txid carry txid 0 in seq order, which
 * was their commit order, so (0, seq) is exactly where such a cursor stood; for a row that a replica
 * of the earlier release wrote after the upgrade, it lies before the row, so a resume from it may
 * repeat notifications but never skips one.
 */
export async function cursorPosition(
  cursor: string,
  store: Pick<NotificationStore, 'positionOfSeq'>,
  argumentName = 'after',
): Promise<LogPosition> {
  const decoded = decodeCursor(cursor, argumentName);
  if ('position' in decoded) return decoded.position;
  return (await store.positionOfSeq(decoded.legacySeq)) ?? { txid: START_OF_LOG.txid, seq: decoded.legacySeq };
}
