// Money records limited to the caller's accounts: what every read of the store is given, so the
// database itself leaves other accounts out (pages stay full, totals exact), and what a record read
// by its id must belong to (or be answered as missing, so ids cannot be probed).
import type { CollectionNotificationRecord } from '../domain/index.ts';
import { forbiddenAccount } from '../errors.ts';
import type { NotificationStore } from '../store/types.ts';
import type { VisibleAccounts } from './caller.ts';

/** The accounts an operation may read, and the checks every path to a money record goes through. */
export interface AccountScope {
  /**
   * The account filter of a store read: `accountNumber` when the caller asked for one (FORBIDDEN
   * when it may not see it), else every account it may see; undefined: no filter (every account).
   */
  filter(accountNumber: string | undefined): { accountNumber?: string; accounts?: readonly string[] };
  /**
   * `record` as a read by id answers it: null when it belongs to an account the caller may not see,
   * exactly as when none is stored, so a caller cannot learn which settlements exist.
   */
  visible(record: CollectionNotificationRecord | null): CollectionNotificationRecord | null;
}

/**
 * The scope of a caller who may see `visible`; `onForbidden` counts each account argument refused
 * (the caller is told FORBIDDEN anyway). A record read by id is never counted: nothing, /metrics
 * included, may tell another account's id from a missing one.
 */
export function createAccountScope(visible: VisibleAccounts, onForbidden: () => void): AccountScope {
  if (visible === 'all')
    return { filter: (accountNumber) => (accountNumber === undefined ? {} : { accountNumber }), visible: (record) => record };
  const sees = new Set(visible);
  const forbid = (error: Error) => {
    onForbidden();
    return error;
  };
  return {
    filter(accountNumber) {
      if (accountNumber === undefined) return { accounts: visible };
      if (!sees.has(accountNumber)) throw forbid(forbiddenAccount(`Account ${accountNumber}`));
      return { accountNumber };
    },
    visible(record) {
      return record === null || sees.has(record.accountNumber) ? record : null;
    },
  };
}

/**
 * `store` as one caller reads it: lists, replays and summaries filtered to the accounts `scope`
 * allows (by the database), an account argument outside them FORBIDDEN; records read by id that
 * belong to another account read as missing.
 */
export function scopedStore(store: NotificationStore, scope: AccountScope): NotificationStore {
  return {
    ...bound(store),
    getMany: async (ids) => (await store.getMany(ids)).map((record) => scope.visible(record)),
    listNewestFirst: ({ accountNumber, ...query }) => store.listNewestFirst({ ...query, ...scope.filter(accountNumber) }),
    listAfter: ({ accountNumber, ...query }) => store.listAfter({ ...query, ...scope.filter(accountNumber) }),
    summarize: ({ accountNumber, ...query }) => store.summarize({ ...query, ...scope.filter(accountNumber) }),
  };
}

/** Every method of `store`, bound to it, so a copy may override some. */
function bound(store: NotificationStore): NotificationStore {
  return {
    kind: store.kind,
    identity: store.identity,
    insert: (notification) => store.insert(notification),
    getMany: (ids) => store.getMany(ids),
    listNewestFirst: (query) => store.listNewestFirst(query),
    listAfter: (query) => store.listAfter(query),
    settledHead: () => store.settledHead(),
    committedHead: () => store.committedHead(),
    summarize: (query) => store.summarize(query),
    size: () => store.size(),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}
