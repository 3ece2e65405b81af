import { MAX_ID_LENGTH, type NewCollectionNotification } from '../domain/index.ts';
import { UnstorableNotificationError } from './batch.ts';

/**
 * Refuses, alike on every backend and before either database sees it, a notification whose id no
 * index of both stores could hold: PostgreSQL's btree refuses an entry of a few KB that SQLite takes.
 * The webhook refuses such ids on arrival; this is for every other writer (an import, say).
 */
export function checkIdLengths(notification: NewCollectionNotification): void {
  const overlong = (['settlementId', 'sessionId'] as const).find((name) => notification[name].length > MAX_ID_LENGTH);
  if (overlong) throw new UnstorableNotificationError(new Error(`its ${overlong} is longer than ${MAX_ID_LENGTH} characters`));
}
