import type { CollectionNotificationRecord, CollectionSummaryRecord, NewCollectionNotification } from '../domain/index.ts';

export type InsertResult =
  | { status: 'inserted'; notification: CollectionNotificationRecord }
  | { status: 'duplicate' };

/**
 * What `summarize` totals: the notifications whose time, their `transactionTime` or their
 * `receivedAt` where the bank's time was unreadable, falls in [from, to) (to the millisecond),
 * optionally of one account; days are cut at midnight in `timezone`.
 */
export interface SummaryQuery {
  accountNumber?: string | undefined;
  from: Date;
  to: Date;
  /** IANA zone of the bank's calendar (`BANK_TIMEZONE`). */
  timezone: string;
}

/**
 * Durable home of collection notifications. Every backend gives the same guarantees:
 * - `insert` resolves only after the row is durably committed, and rejects (storing nothing) when
 *   it cannot commit; concurrent inserts share one transaction and commit (group commit), each
 *   still answered for itself, and a transaction that fails rejects every insert it held;
 * - `settlementId` is unique: of any number of concurrent inserts of one settlementId, on one
 *   process or many sharing the database, exactly one resolves `inserted`;
 * - `seq` increases in commit order, so "everything after seq N" read once, then live events with
 *   seq > N, misses nothing and repeats nothing.
 */
export interface NotificationStore {
  readonly kind: 'sqlite' | 'postgres';
  insert(notification: NewCollectionNotification): Promise<InsertResult>;
  /** The notifications for these settlementIds, in the same order; null where none is stored. */
  getMany(settlementIds: readonly string[]): Promise<(CollectionNotificationRecord | null)[]>;
  /**
   * Newest first: seq below `beforeSeq` (all when undefined), at most `limit`; with `from` / `to`,
   * only notifications whose time (see SummaryQuery) falls in [from, to), either end open when absent.
   */
  listNewestFirst(query: {
    accountNumber?: string | undefined;
    beforeSeq?: number | undefined;
    limit: number;
    from?: Date | undefined;
    to?: Date | undefined;
  }): Promise<CollectionNotificationRecord[]>;
  /** Oldest first: seq above `afterSeq`, at most `limit`; the replay of a resumed subscription. */
  listAfter(query: { accountNumber?: string | undefined; afterSeq: number; limit: number }): Promise<CollectionNotificationRecord[]>;
  /** Exact totals of the notifications whose time falls in [from, to), and of each bank-local day in it. */
  summarize(query: SummaryQuery): Promise<CollectionSummaryRecord>;
  /**
   * The store's size, cheaply: what it takes on disk and about how many notifications it holds,
   * read from the database's own bookkeeping, never by counting rows. For the size metrics.
   */
  size(): Promise<StoreSize>;
  /** Rejects when the store cannot be reached; for readiness. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What `NotificationStore.size` answers. */
export interface StoreSize {
  /** Bytes the notifications take in the database: table, indexes and overflow (the SQLite file: all of it). */
  bytes: number;
  /** Stored notifications, estimated without a scan (SQLite: exact unless rows in the middle were deleted). */
  approximateRows: number;
}
