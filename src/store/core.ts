// The store, the same for every backend: the NotificationStore's rules (closing, limits, getMany's
// order, group commit, summaries by bank-local day) over a backend that only runs statements.
import { LRUCache } from 'lru-cache';
import { checkIdLengths } from './id-lengths.ts';
import { keepApart } from './quarantine-row.ts';
import {
  comparePositions,
  DECIDED_STATUSES,
  MONEY_FIELDS,
  moneyFieldsOf,
  moneyKey,
  START_OF_LOG,
  type ConfirmationOutcome,
  type LogPosition,
  type MoneyFields,
  type NewCollectionNotification,
} from '../domain/index.ts';
import { createInsertBatcher, type BatchOptions } from './batch.ts';
import { checkLimit, inRequestedOrder, insertedRecord, toRecord, type NotificationRow } from './notification-row.ts';
import { bankDays, summaryRecord, type DayWindow, type DaySums } from './summary.ts';
import type { ClaimQuery, CollectionStore, Decision, NotificationStore, QuarantineStore, StoreSize } from './types.ts';

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
}

/** A page of the settled log, oldest first (see NotificationStore.listAfter); `limit` checked. */
export interface AfterPage extends AccountFilter {
  after: LogPosition;
  /** The last position it may hold; undefined for no bound. */
  through: LogPosition | undefined;
  /** Only CONFIRMED notifications. */
  confirmed: boolean;
  limit: number;
}

/** What `decidedHead` is worked out from, both read from one snapshot. */
export interface DecisionBounds {
  /** The newest settled position, undefined when the log is empty. */
  head: LogPosition | undefined;
  /** The oldest PENDING notification's position (settled or not), undefined when none is. */
  firstPending: LogPosition | undefined;
}

/** The confirmation queue's statements (see ConfirmationQueue); the core checks their arguments. */
export interface ConfirmationBackend {
  /** The claimed rows, in any order. */
  claim(query: ClaimQuery): Promise<NotificationRow[]>;
  record(outcomes: readonly ConfirmationOutcome[]): Promise<boolean[]>;
  defer(settlementIds: readonly string[], delayMs: number): Promise<void>;
  countPending(): Promise<number>;
  oldestPending(): Promise<string | null>;
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
  /** The settled head and the first PENDING position, from one snapshot. */
  decisionBounds(): Promise<DecisionBounds>;
  readonly confirmations: ConfirmationBackend;
  /** Each day's exact sums, in the order given, all read from one snapshot. */
  daySums(days: readonly DayWindow[], filter: AccountFilter): Promise<DaySums[]>;
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
    async listNewestFirst({ before, limit, from, to, ...accounts }) {
      const filter = narrowed(accounts);
      if (filter === NO_ACCOUNT) return [];
      return records(await open().newestFirst({ ...filter, before, limit: checkLimit(limit), from, to }));
    },
    async listAfter({ after, through, confirmed = false, limit, ...accounts }) {
      const filter = narrowed(accounts);
      if (filter === NO_ACCOUNT) return [];
      return records(await open().after({ ...filter, after, through, confirmed, limit: checkLimit(limit) }));
    },
    async settledHead() {
      return (await open().settledHead()) ?? START_OF_LOG;
    },
    async committedHead() {
      return (await open().committedHead()) ?? START_OF_LOG;
    },
    async summarize({ from, to, timezone, ...accounts }) {
      const days = bankDays(from, to, timezone);
      const filter = narrowed(accounts);
      const sums = filter === NO_ACCOUNT ? [] : await open().daySums(days, filter);
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
      async claim({ limit, leaseMs }) {
        const store = open();
        if (checkLimit(limit) === 0) return [];
        if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0) throw new RangeError(`leaseMs must be a whole number > 0, got ${leaseMs}`);
        return records(await store.confirmations.claim({ limit, leaseMs })).sort((a, b) => comparePositions(a.position, b.position));
      },
      async record(outcomes) {
        const store = open();
        for (const outcome of outcomes) {
          if (!DECIDED_STATUSES.includes(outcome.status)) throw new RangeError(`an outcome must be decided, got ${outcome.status}`);
        }
        return outcomes.length === 0 ? [] : store.confirmations.record(outcomes);
      },
      async defer(settlementIds, delayMs) {
        const store = open();
        if (!Number.isSafeInteger(delayMs) || delayMs < 0) throw new RangeError(`delayMs must be a whole number ≥ 0, got ${delayMs}`);
        if (settlementIds.length > 0) await store.confirmations.defer(settlementIds, delayMs);
      },
      countPending: async () => open().confirmations.countPending(),
      oldestPending: async () => open().confirmations.oldestPending(),
      decidedHead: async () => decisionOf(await open().decisionBounds()).through,
      decision: async () => decisionOf(await open().decisionBounds()),
    },
    close() {
      // Inserts already queued are written and answered first: a SIGTERM drain loses none.
      closing ??= batcher.drain().then(() => backend.close());
      return closing;
    },
  };
}

const DUPLICATE = { status: 'duplicate' } as const;

/**
 * Decided through the settled head, or through the position just before the first PENDING one when
 * that is not after it: nothing lies between (txid, seq - 1) and (txid, seq), and every notification
 * before the first PENDING one is decided. Both read from one snapshot, so no PENDING notification
 * can settle below it later.
 */
function decisionOf({ head = START_OF_LOG, firstPending }: DecisionBounds): Decision {
  if (firstPending === undefined || comparePositions(firstPending, head) > 0) return { through: head, pendingAt: undefined };
  return { through: { txid: firstPending.txid, seq: firstPending.seq - 1 }, pendingAt: firstPending };
}

const pickMoney = (record: MoneyFields): MoneyFields =>
  Object.fromEntries(MONEY_FIELDS.map((field) => [field, record[field]])) as MoneyFields;

/** A read whose account filters leave no account: nothing to ask the database. */
const NO_ACCOUNT = 'none';

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
