import type {
  CollectionNotificationRecord,
  CollectionSummaryRecord,
  ConfirmationOutcome,
  ConfirmationRetry,
  ConfirmationStatus,
  ConfirmedNotificationRecord,
  OperatorDecision,
  LogPosition,
  MoneyFields,
  NewCollectionNotification,
  NewQuarantinedDelivery,
  QuarantinedDeliveryRecord,
  QuarantineKind,
  QuarantineReview,
} from '../domain/index.ts';

export type InsertResult =
  | {
      status: 'inserted';
      notification: CollectionNotificationRecord;
      /**
       * A position the log had settled through when this insert committed (on SQLite the
       * notification's own; on PostgreSQL the oldest transaction then running, at seq 0): a log
       * follower with nobody to hand notifications to may move there without reading.
       */
      settled: LogPosition;
    }
  | { status: 'duplicate' };

/** A read of one of the store's logs, oldest first: positions after `after`, at most `limit`. */
export interface LogReadQuery {
  accountNumber?: string | undefined;
  /** Only notifications of these accounts (none when empty), beside `accountNumber`; every account when undefined. */
  accounts?: readonly string[] | undefined;
  after: LogPosition;
  /** Only positions at or before it; no bound when undefined. */
  through?: LogPosition | undefined;
  limit: number;
}

/**
 * What `summarize` totals: the notifications whose time, their `transactionTime` or their
 * `receivedAt` where the bank's time was unreadable, falls in [from, to) (to the millisecond),
 * optionally of one account; days are cut at midnight in `timezone`.
 */
export interface SummaryQuery {
  accountNumber?: string | undefined;
  /** Only notifications of these accounts (none when empty); every account when undefined. */
  accounts?: readonly string[] | undefined;
  from: Date;
  to: Date;
  /** IANA zone of the bank's calendar (`BANK_TIMEZONE`). */
  timezone: string;
  /**
   * Count only CONFIRMED notifications; otherwise every one the bank has not refuted (see
   * countedStatuses). Refuted ones are never counted, only told in `refutedCount`.
   */
  confirmed?: boolean | undefined;
}

/**
 * Durable home of collection notifications. Every backend gives the same guarantees:
 * - `insert` resolves only after the row is durably committed, and rejects (storing nothing) when
 *   it cannot commit; concurrent inserts share one transaction and commit (group commit), each
 *   still answered for itself, and a transaction that fails rejects every insert it held;
 * - `settlementId` is unique: of any number of concurrent inserts of one settlementId, on one
 *   process or many sharing the database, exactly one resolves `inserted`;
 * - the notifications form a log ordered by position (`LogPosition`). Its **settled** part is final:
 *   no notification can later appear at or below a settled position. The log reads (`listAfter`,
 *   `listNewestFirst`, `settledHead`) see only the settled part, so "everything after position P"
 *   read once, then again from the last position read, misses nothing and repeats nothing. On
 *   SQLite everything committed is settled (one writer at a time, seq in commit order); on
 *   PostgreSQL a notification settles once every transaction older than its own has ended.
 */
export interface NotificationStore {
  readonly kind: 'sqlite' | 'postgres';
  /**
   * The id drawn when this store was made, the same for every replica on it: pub/sub channels carry
   * it, so deployments on different stores never hear each other.
   */
  readonly identity: string;
  insert(notification: NewCollectionNotification): Promise<InsertResult>;
  /** The notifications for these settlementIds, in the same order, null where none is stored; settled or not. */
  getMany(settlementIds: readonly string[]): Promise<(CollectionNotificationRecord | null)[]>;
  /**
   * The settled log newest first: positions before `before` (all when undefined), at most `limit`;
   * with `from` / `to`, only notifications whose time (see SummaryQuery) falls in [from, to), either
   * end open when absent; with `confirmation`, only those whose status is one of these (none when
   * empty). Each is read from indexes, a rare status without reading past the others.
   */
  listNewestFirst(query: {
    accountNumber?: string | undefined;
    /** Only notifications of these accounts (none when empty), beside `accountNumber`; every account when undefined. */
    accounts?: readonly string[] | undefined;
    before?: LogPosition | undefined;
    limit: number;
    from?: Date | undefined;
    to?: Date | undefined;
    confirmation?: readonly ConfirmationStatus[] | undefined;
  }): Promise<CollectionNotificationRecord[]>;
  /** The settled log oldest first: positions after `after`, at most `limit`; live delivery and replays read it. */
  listAfter(query: LogReadQuery): Promise<CollectionNotificationRecord[]>;
  /** The position of the newest settled notification (`START_OF_LOG` when none), reading no row. */
  settledHead(): Promise<LogPosition>;
  /**
   * The position of the newest committed notification, settled or not (`START_OF_LOG` when none):
   * a log reader that stopped short of it knows more is coming once older transactions end.
   */
  committedHead(): Promise<LogPosition>;
  /**
   * Exact totals of the notifications whose time falls in [from, to), and of each bank-local day in
   * it, never counting what the bank refuted (see SummaryQuery.confirmed).
   */
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

/** A page of the quarantine, newest first (the largest ids); every filter optional. */
export interface QuarantineQuery {
  /** Only deliveries with a smaller id (the page after it); every one when undefined. */
  before: number | undefined;
  limit: number;
  kind: QuarantineKind | undefined;
  /** true: only those reviewed; false: only those awaiting review. */
  reviewed: boolean | undefined;
  /** Only deliveries received in [from, to), either end open when absent. */
  from: Date | undefined;
  to: Date | undefined;
}

/** How much may await review in the quarantine: `QUARANTINE_MAX_ROWS` and `QUARANTINE_MAX_BYTES`. */
export interface QuarantineBounds {
  maxRows: number;
  /** Bytes of raw bodies. */
  maxBytes: number;
}

/**
 * What became of one delivery handed to `QuarantineStore.keep`: kept, the bound it would pass, or the
 * error that kept it out (the database refusing it, or failing the part of the batch it was in).
 */
export type KeepOutcome = 'kept' | 'over_rows' | 'over_bytes' | { failed: unknown };

/** What recording a review came to: the delivery as it now stands, or why nothing changed. */
export type ReviewResult =
  | { status: 'reviewed'; delivery: QuarantinedDeliveryRecord }
  | { status: 'already-reviewed'; delivery: QuarantinedDeliveryRecord }
  | { status: 'unknown' };

/**
 * The quarantine, in the same database as the notifications and apart from them: what the webhook
 * refused or took for a conflict (domain/quarantine.ts). Bounded by the deliveries awaiting review.
 */
export interface QuarantineStore {
  /**
   * Keeps `deliveries` in order, each while what awaits review stays within `bounds`, in one
   * transaction committed before it resolves; answers, for each, whether it was kept, which bound it
   * would pass, or why it failed. Exact across replicas. Each delivery is answered for itself: when
   * the database refuses the statement, the halves are kept apart, down to single deliveries, so one
   * it will not take fails alone. Rejects, having kept none, when the write fails as a whole.
   */
  keep(deliveries: readonly NewQuarantinedDelivery[], bounds: QuarantineBounds): Promise<KeepOutcome[]>;
  list(query: QuarantineQuery): Promise<QuarantinedDeliveryRecord[]>;
  /** Records a review once: a delivery already reviewed keeps its first review. */
  review(review: QuarantineReview): Promise<ReviewResult>;
  /** How many await review, read from the row the database keeps of them. */
  countUnreviewed(): Promise<number>;
  /**
   * The deliveries kept with one of these settlementIds or sessionIds (reviewed or not), newest
   * first, at most `limit`: what reached the webhook of a transfer and was refused. From indexes.
   */
  withTransferIds(query: TransferIdsQuery): Promise<QuarantinedDeliveryRecord[]>;
}

/** What `QuarantineStore.withTransferIds` looks for: a delivery matches when either of its ids is among these. */
export interface TransferIdsQuery {
  settlementIds: readonly string[];
  sessionIds: readonly string[];
  limit: number;
}

/** The store as the app opens it: the notifications, and the quarantine beside them. */
export interface CollectionStore extends NotificationStore {
  /**
   * The money fields of the notification stored under `settlementId` (settled or not), null when
   * none is: from what the store remembers of the ids it wrote or read, else read and remembered.
   */
  moneyOf(settlementId: string): Promise<MoneyFields | null>;
  /**
   * The first notification in the log (settled or not) stored with this sessionId, null when none
   * is; from its index. For operators reconciling with the bank: no account filter applies.
   */
  findBySessionId(sessionId: string): Promise<CollectionNotificationRecord | null>;
  readonly quarantine: QuarantineStore;
  /** The notifications that wait for the bank's answer (status `PENDING`). */
  readonly confirmations: ConfirmationQueue;
  /** The log of confirmations: what the confirmed stream follows. */
  readonly confirmationLog: ConfirmationLog;
}

/**
 * The log of confirmations: each notification once, when it became CONFIRMED (by the bank's answer,
 * an import or an operator), in the order those confirmations committed, with positions of its own.
 * It keeps the notification log's rules (NotificationStore): its reads see only its settled part,
 * so reading "everything after P" again from the last position read misses nothing and repeats
 * nothing, on any replica.
 */
export interface ConfirmationLog {
  /** The settled log oldest first: positions after `after` (and at or before `through` when given), at most `limit`. */
  listAfter(query: LogReadQuery): Promise<ConfirmedNotificationRecord[]>;
  /** The position of the newest settled confirmation (`START_OF_LOG` when none), reading no notification. */
  settledHead(): Promise<LogPosition>;
  /** The position of the newest committed confirmation, settled or not (`START_OF_LOG` when none). */
  committedHead(): Promise<LogPosition>;
}

/** What `ConfirmationQueue.claim` takes. */
export interface ClaimQuery {
  /** At most this many. */
  limit: number;
  /** How long they are this replica's: the bank's answer must be recorded (or the row deferred) before it ends. */
  leaseMs: number;
  /**
   * Only notifications no ask has failed about since the bank last answered one of theirs: a paused
   * confirmer's probe of the bank, which a notification the bank refuses must never become.
   */
  probe?: boolean | undefined;
}

/** What an operator's decision came to (ConfirmationQueue.decide). */
export type DecideResult =
  | { status: 'decided'; notification: CollectionNotificationRecord }
  /** The notification's status does not allow the decision (it is not PENDING); nothing changed. */
  | { status: 'refused'; current: ConfirmationStatus }
  | { status: 'unknown' };

/**
 * The PENDING notifications as a queue, shared by every replica on the store. A claim leases due
 * ones to the claiming replica: no other replica claims them until the lease ends (on PostgreSQL
 * claims skip rows another replica is claiming), so a replica that dies mid-way leaves them to be
 * claimed again once it has run out. An outcome is recorded only over a row still PENDING: once
 * decided, a status never changes.
 */
export interface ConfirmationQueue {
  /** Claims up to `limit` PENDING notifications that are due (oldest in the log first), each for `leaseMs`; one write. */
  claim(query: ClaimQuery): Promise<CollectionNotificationRecord[]>;
  /**
   * Records the bank's answers, all in one transaction, each counted as an ask; answers, for each,
   * whether it was recorded: false where the notification is no longer PENDING (with `overDecided`,
   * an operator's RECHECK: where it is CONFIRMED, which never changes), or unknown. An outcome of
   * CONFIRMED joins the log of confirmations in the same transaction. An empty list writes nothing.
   */
  record(outcomes: readonly ConfirmationOutcome[], options?: { overDecided?: boolean | undefined }): Promise<boolean[]>;
  /**
   * Records asks that decided nothing (ConfirmationRetry), in one write: each counted, due again
   * after its delay. Answers, for each, whether it was recorded (false where the notification is not
   * PENDING, or, reopened, not MISMATCHED or UNCHECKED either).
   */
  retry(retries: readonly ConfirmationRetry[]): Promise<boolean[]>;
  /** Makes these PENDING notifications due `delayMs` from now (a pause, or 0 to give them back at once); asks nothing, counts nothing; one write. */
  defer(settlementIds: readonly string[], delayMs: number): Promise<void>;
  /** Records an operator's decision over a PENDING notification, durably, with who decided and why. */
  decide(decision: OperatorDecision): Promise<DecideResult>;
  /** How many notifications are PENDING, from the index of them alone. */
  countPending(): Promise<number>;
  /** When the first PENDING notification of the log was received (ISO 8601); null when none is PENDING. */
  oldestPending(): Promise<string | null>;
}
