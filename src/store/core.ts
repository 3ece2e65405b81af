// The store, the same for every backend: the NotificationStore's rules (closing, limits, getMany's
// order, group commit, summaries by bank-local day) over a backend that only runs statements.
import { LRUCache } from 'lru-cache';
import { checkIdLengths } from './id-lengths.ts';
import { keepApart } from './quarantine-row.ts';
import {
  comparePositions,
  DECIDED_STATUSES,
  type ConfirmationRetry,
  type ConfirmedNotificationRecord,
  type OperatorDecision,
  MONEY_FIELDS,
  moneyFieldsOf,
  moneyKey,
  START_OF_LOG,
  CONFIRMATION_STATUSES,
  type ConfirmationOutcome,
  type ConfirmationStatus,
  type LogPosition,
  type MoneyFields,
  type NewCollectionNotification,
} from '../domain/index.ts';
import { createInsertBatcher, type BatchOptions } from './batch.ts';
import { checkLimit, inRequestedOrder, insertedRecord, toPosition, toRecord, type NotificationRow } from './notification-row.ts';
import { bankDays, summaryRecord, type DayWindow, type DaySums } from './summary.ts';
import type { ClaimQuery, CollectionStore, DecideResult, NotificationStore, QuarantineStore, StoreSize } from './types.ts';

/** What a backend wrote of one batch: each notification's position, null where it was already stored. */
export interface WrittenBatch {
  positions: (LogPosition | null)[];
  /** A position the log had settled through when the batch committed (see InsertResult). */
  settled: LogPosition;
}

/**
 * Which accounts a read covers: one (`accountNumber`), several (`accounts`, two or more), or every
 * one (both undefined). Never both: the core narrows a query's filters to one of these first.
 */
export interface AccountFilter {
  accountNumber: string | undefined;
  accounts: readonly string[] | undefined;
}

/** A page of the settled log, newest first (see NotificationStore.listNewestFirst); `limit` checked. */
export interface NewestFirstPage extends AccountFilter {
  before: LogPosition | undefined;
  limit: number;
  from: Date | undefined;
  to: Date | undefined;
  /** Only notifications whose confirmation status is one of these (never empty, each once, fewer than all); every one when undefined. */
  statuses: readonly ConfirmationStatus[] | undefined;
}

/** A page of the settled log, oldest first (see NotificationStore.listAfter); `limit` checked. */
export interface AfterPage extends AccountFilter {
  after: LogPosition;
  /** The last position it may hold; undefined for no bound. */
  through: LogPosition | undefined;
  limit: number;
}

/** A notification row read through the log of confirmations: with its position there. */
export interface ConfirmedRow extends NotificationRow {
  confirmed_txid: number | string;
  confirmed_seq: number | string;
}

/** The confirmation queue's statements (see ConfirmationQueue); the core checks their arguments. */
export interface ConfirmationBackend {
  /** The claimed rows, in any order. */
  claim(query: ClaimQuery): Promise<NotificationRow[]>;
  record(outcomes: readonly ConfirmationOutcome[], overDecided: boolean): Promise<boolean[]>;
  retry(retries: readonly ConfirmationRetry[]): Promise<boolean[]>;
  defer(settlementIds: readonly string[], delayMs: number): Promise<void>;
  /** The row as decided, or, where the decision was not taken, the row's status (undefined when none is stored). */
  decide(decision: OperatorDecision): Promise<{ decided: NotificationRow } | { current: string | undefined }>;
  countPending(): Promise<number>;
  oldestPending(): Promise<string | null>;
}

/** The log of confirmations' reads (see ConfirmationLog). */
export interface ConfirmationLogBackend {
  after(page: AfterPage): Promise<ConfirmedRow[]>;
  settledHead(): Promise<LogPosition | undefined>;
  committedHead(): Promise<LogPosition | undefined>;
}

/** The statements and driver calls of one database; the core never calls it once closed. */
export interface StoreBackend {
  readonly kind: NotificationStore['kind'];
  /** The id drawn when the store was made (its store_identity row). */
  readonly identity: string;
  /** How many batches may be written at once: 1 where writes take turns anyway (SQLite). */
  readonly batchesInFlight: number;
  /**
   * Writes notifications with distinct settlementIds in one transaction, in order, committing only
   * when something was inserted; throws, having stored nothing, when the transaction fails.
   */
  insertBatch(notifications: NewCollectionNotification[]): Promise<WrittenBatch>;
  /** The rows of these settlementIds (any order; settled or not). */
  rowsOf(settlementIds: readonly string[]): Promise<NotificationRow[]>;
  /** The first row in log order stored with this sessionId (settled or not), undefined when none is. */
  rowOfSession(sessionId: string): Promise<NotificationRow | undefined>;
  newestFirst(page: NewestFirstPage): Promise<NotificationRow[]>;
  after(page: AfterPage): Promise<NotificationRow[]>;
  /** The newest settled position, undefined when the log is empty. */
  settledHead(): Promise<LogPosition | undefined>;
  /** The newest committed position, settled or not, undefined when the log is empty. */
  committedHead(): Promise<LogPosition | undefined>;
  readonly confirmations: ConfirmationBackend;
  readonly confirmationLog: ConfirmationLogBackend;
  /** Each day's exact sums, in the order given, all read from one snapshot; counted as `countedStatuses(confirmed)` says. */
  daySums(days: readonly DayWindow[], filter: AccountFilter, confirmed: boolean): Promise<DaySums[]>;
  size(): Promise<StoreSize>;
  ping(): Promise<void>;
  /** Whether a failed insertBatch was the database refusing the statement (retried in parts), not failing to write at all. */
  refusedStatement(error: unknown): boolean;
  /**
   * Whether a failed insert of one row was the database refusing that row's content (a constraint, a
   * value it cannot hold): a retry cannot help it. Not a lock, a rolled-back transaction or a fault.
   */
  refusedRow(error: unknown): boolean;
  /** The quarantine in the same database. */
  readonly quarantine: QuarantineStore;
  /** Releases the connection(s); called once, after the last batch is answered. */
  close(): Promise<void>;
}

/** The NotificationStore over `backend`: inserts are group-committed through it, `backend.batchesInFlight` batches at a time. */
export function createStore(backend: StoreBackend, options: BatchOptions): CollectionStore {
  let closing: Promise<void> | undefined;
  // Reads and inserts after close() are refused at once; inserts queued before it are still written.
  const open = () => {
    if (closing) throw new Error(`The ${backend.kind} store is closed`);
    return backend;
  };
  const records = (rows: readonly NotificationRow[]) => rows.map(toRecord);
  const stored = knownStored();
  const batcher = groupCommit(backend, options, stored);
  const answerWithTheTurn = endOfTurnAnswers();

  return {
    kind: backend.kind,
    identity: backend.identity,
    async insert(notification) {
      open();
      checkIdLengths(notification);
      // The bank's retries of a transfer we own are answered here, without a write or a round trip,
      // at the end of the turn with the others, as a batch's inserts are.
      if (stored.has(notification.settlementId)) return answerWithTheTurn(DUPLICATE);
      return batcher.insert(notification);
    },
    async moneyOf(settlementId) {
      const known = stored.money(settlementId);
      if (known) return known;
      const [row] = await open().rowsOf([settlementId]);
      if (!row) return null;
      const money = pickMoney(toRecord(row));
      stored.add(settlementId, money);
      return money;
    },
    async findBySessionId(sessionId) {
      const row = await open().rowOfSession(sessionId);
      return row === undefined ? null : toRecord(row);
    },
    async getMany(settlementIds) {
      const store = open();
      if (settlementIds.length === 0) return [];
      return inRequestedOrder(settlementIds, records(await store.rowsOf(settlementIds)));
    },
    async listNewestFirst({ before, limit, from, to, confirmation, ...accounts }) {
      const filter = narrowed(accounts);
      const statuses = statusFilter(confirmation);
      if (filter === NO_ACCOUNT || statuses?.length === 0) return [];
      return records(await open().newestFirst({ ...filter, before, limit: checkLimit(limit), from, to, statuses }));
    },
    async listAfter({ after, through, limit, ...accounts }) {
      const filter = narrowed(accounts);
      if (filter === NO_ACCOUNT) return [];
      return records(await open().after({ ...filter, after, through, limit: checkLimit(limit) }));
    },
    async settledHead() {
      return (await open().settledHead()) ?? START_OF_LOG;
    },
    async committedHead() {
      return (await open().committedHead()) ?? START_OF_LOG;
    },
    async summarize({ from, to, timezone, confirmed = false, ...accounts }) {
      const days = bankDays(from, to, timezone);
      const filter = narrowed(accounts);
      const sums = filter === NO_ACCOUNT ? [] : await open().daySums(days, filter, confirmed);
      return summaryRecord(days, sums, timezone);
    },
    async size() {
      return open().size();
    },
    async ping() {
      return open().ping();
    },
    quarantine: {
      keep: async (deliveries, bounds) =>
        deliveries.length === 0 ? [] : keepApart(deliveries, (part) => open().quarantine.keep(part, bounds), backend.refusedStatement),
      list: async (query) => open().quarantine.list({ ...query, limit: checkLimit(query.limit) }),
      review: async (review) => open().quarantine.review(review),
      countUnreviewed: async () => open().quarantine.countUnreviewed(),
      async withTransferIds(query) {
        const store = open();
        if (checkLimit(query.limit) === 0 || query.settlementIds.length + query.sessionIds.length === 0) return [];
        return store.quarantine.withTransferIds(query);
      },
    },
    confirmations: {
      async claim({ limit, leaseMs, probe = false }) {
        const store = open();
        if (checkLimit(limit) === 0) return [];
        checkDelay('leaseMs', leaseMs, 1);
        return records(await store.confirmations.claim({ limit, leaseMs, probe })).sort((a, b) => comparePositions(a.position, b.position));
      },
      async record(outcomes, { overDecided = false } = {}) {
        const store = open();
        for (const outcome of outcomes) {
          if (!DECIDED_STATUSES.includes(outcome.status)) throw new RangeError(`an outcome must be decided, got ${outcome.status}`);
        }
        return outcomes.length === 0 ? [] : store.confirmations.record(outcomes, overDecided);
      },
      async retry(retries) {
        const store = open();
        for (const retry of retries) checkDelay('delayMs', retry.delayMs, 0);
        return retries.length === 0 ? [] : store.confirmations.retry(retries);
      },
      async defer(settlementIds, delayMs) {
        const store = open();
        checkDelay('delayMs', delayMs, 0);
        if (settlementIds.length > 0) await store.confirmations.defer(settlementIds, delayMs);
      },
      decide: async (decision) => decided(await open().confirmations.decide(decision)),
      countPending: async () => open().confirmations.countPending(),
      oldestPending: async () => open().confirmations.oldestPending(),
    },
    confirmationLog: {
      async listAfter({ after, through, limit, ...accounts }) {
        const filter = narrowed(accounts);
        if (filter === NO_ACCOUNT) return [];
        return (await open().confirmationLog.after({ ...filter, after, through, limit: checkLimit(limit) })).map(toConfirmedRecord);
      },
      settledHead: async () => (await open().confirmationLog.settledHead()) ?? START_OF_LOG,
      committedHead: async () => (await open().confirmationLog.committedHead()) ?? START_OF_LOG,
    },
    close() {
      // Inserts already queued are written and answered first: a SIGTERM drain loses none.
      closing ??= batcher.drain().then(() => backend.close());
      return closing;
    },
  };
}

const DUPLICATE = { status: 'duplicate' } as const;

/** Refuses a lease or delay that is not a whole number of milliseconds of at least `least`. */
function checkDelay(name: string, value: number, least: number): void {
  if (!Number.isSafeInteger(value) || value < least) throw new RangeError(`${name} must be a whole number ≥ ${least}, got ${value}`);
}

/** A row read through the log of confirmations as the record it hands out. */
function toConfirmedRecord(row: ConfirmedRow): ConfirmedNotificationRecord {
  return { ...toRecord(row), confirmedAt: toPosition(row.confirmed_txid, row.confirmed_seq) };
}

/** What a backend's decide came to, as the queue answers it. */
function decided(result: Awaited<ReturnType<ConfirmationBackend['decide']>>): DecideResult {
  if ('decided' in result) return { status: 'decided', notification: toRecord(result.decided) };
  return result.current === undefined ? { status: 'unknown' } : { status: 'refused', current: result.current as ConfirmationStatus };
}

const pickMoney = (record: MoneyFields): MoneyFields =>
  Object.fromEntries(MONEY_FIELDS.map((field) => [field, record[field]])) as MoneyFields;

/** A read whose account filters leave no account: nothing to ask the database. */
const NO_ACCOUNT = 'none';

/**
 * A query's `confirmation` as the statuses a page reads, each once in the schema's order: undefined
 * when it leaves every status in (none given, or all of them), empty when it leaves none.
 */
function statusFilter(confirmation: readonly ConfirmationStatus[] | undefined): readonly ConfirmationStatus[] | undefined {
  if (confirmation === undefined) return undefined;
  const statuses = CONFIRMATION_STATUSES.filter((status) => confirmation.includes(status));
  return statuses.length === CONFIRMATION_STATUSES.length ? undefined : statuses;
}

/**
 * A query's `accountNumber` and `accounts` as one filter: the one account when that is all they
 * leave (the single-account statements and indexes serve it), NO_ACCOUNT when they leave none.
 */
function narrowed({
  accountNumber,
  accounts,
}: {
  accountNumber?: string | undefined;
  accounts?: readonly string[] | undefined;
}): AccountFilter | typeof NO_ACCOUNT {
  if (accounts === undefined) return { accountNumber, accounts: undefined };
  if (accountNumber !== undefined) return accounts.includes(accountNumber) ? { accountNumber, accounts: undefined } : NO_ACCOUNT;
  const distinct = [...new Set(accounts)];
  if (distinct.length === 0) return NO_ACCOUNT;
  return distinct.length === 1 ? { accountNumber: distinct[0], accounts: undefined } : { accountNumber: undefined, accounts: distinct };
}

/**
 * Answers given together once the event-loop turn is over (setImmediate), as a batch answers its
 * inserts. Their callers' replies are then written together too: answering each at once cost the
 * webhook much of its throughput (docs/benchmarks.md, "What shapes the code"), each write waking the client on its own.
 */
function endOfTurnAnswers() {
  let waiting: (() => void)[] = [];
  const answerAll = () => {
    const answers = waiting;
    waiting = [];
    for (const answer of answers) answer();
  };
  return <T>(value: T) =>
    new Promise<T>((resolve) => {
      if (waiting.length === 0) setImmediate(answerAll);
      waiting.push(() => resolve(value));
    });
}

/**
 * How many settlementIds a store remembers as stored, the most recently seen kept: the bank retries a
 * transfer when our reply did not reach it, soon after. A few megabytes of heap when full of ids of some
 * 30 characters, each with its money fields.
 */
export const KNOWN_STORED_IDS = 50_000;

/** What a store remembers of a notification it found stored by another writer: only that it is. */
const MONEY_UNKNOWN = '';

/**
 * settlementIds known to be in the database, with their money fields (moneyKey) where known:
 * committed by this store, or found there by its insert (their fields unknown until read). The
 * subgraph never removes a stored notification, so what is known here stays true on every replica;
 * one archived by hand (docs/operations.md) and retried while still remembered gets 01, since we did
 * own it.
 */
function knownStored() {
  const ids = new LRUCache<string, string>({ max: KNOWN_STORED_IDS });
  return {
    // get(), not has(): a transfer the bank keeps retrying stays remembered.
    has: (settlementId: string) => ids.get(settlementId) !== undefined,
    /** The money fields remembered, undefined when not stored or not known. */
    money: (settlementId: string) => {
      const key = ids.get(settlementId);
      return key === undefined || key === MONEY_UNKNOWN ? undefined : moneyFieldsOf(key);
    },
    add: (settlementId: string, money: MoneyFields) => void ids.set(settlementId, moneyKey(money)),
    addFound: (settlementId: string) => void (ids.has(settlementId) || ids.set(settlementId, MONEY_UNKNOWN)),
  };
}

/** Group commit over the backend's batch insert, each insert answered with its record; every id it wrote or found becomes known. */
function groupCommit(backend: StoreBackend, options: BatchOptions, stored: ReturnType<typeof knownStored>) {
  return createInsertBatcher(
    async (notifications) => {
      const { positions, settled } = await backend.insertBatch(notifications);
      notifications.forEach((notification, index) =>
        positions[index] ? stored.add(notification.settlementId, notification) : stored.addFound(notification.settlementId),
      );
      return { records: positions.map((position, index) => position && insertedRecord(notifications[index]!, position)), settled };
    },
    {
      ...options,
      inFlight: backend.batchesInFlight,
      refusedStatement: (error) => backend.refusedStatement(error),
      refusedRow: (error) => backend.refusedRow(error),
    },
  );
}
