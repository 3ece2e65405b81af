// Group commit, the same for every backend: inserts that arrive while the store is busy (or within
// one turn of the event loop) are written together, in one transaction with one durable commit,
// and each caller still gets its own answer.
import type { CollectionNotificationRecord, LogPosition, NewCollectionNotification } from '../domain/index.ts';
import type { InsertResult } from './types.ts';

/** What became of one statement: `rolled-back` when every insert was a duplicate, so nothing needed a durable commit. */
export type BatchOutcome = 'committed' | 'rolled-back' | 'failed';

/** Where each statement's size is recorded: the `collection_store_batch_size` histogram, as prom-client observes. */
export interface BatchSizes {
  observe(labels: { outcome: BatchOutcome }, size: number): void;
}

/** Options every store takes about its batches. */
export interface BatchOptions {
  /** Told once per statement written (a batch, or a part of one retried apart), after its commit, rollback or failure. */
  batchSizes?: BatchSizes | undefined;
}

/**
 * A notification the store refused on its own, for its content (a constraint, a value it cannot
 * hold), once written apart from its batch: a retry cannot help it. `cause` is the database's error.
 */
export class UnstorableNotificationError extends Error {
  constructor(cause: unknown) {
    super(`the store refused this notification: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'UnstorableNotificationError';
  }
}

/**
 * Whether a failed batch is worth retrying in parts: true when the database refused the statement
 * itself (a row it will not take), false when it could not be written at all (the connection lost,
 * the disk full), where every part would fail alike.
 */
export type RefusedStatement = (error: unknown) => boolean;

/**
 * Writes notifications with distinct settlementIds in one transaction, in order; answers, per
 * notification, the stored record or null (already stored), and a log position settled when it
 * committed (see InsertResult). Commits only when something was inserted; throws, having stored
 * nothing, when the transaction fails.
 */
export type WriteBatch = (
  notifications: NewCollectionNotification[],
) => Promise<{ records: (CollectionNotificationRecord | null)[]; settled: LogPosition }>;

/** Bounds on one batch, so one statement stays within the driver's limits and memory. */
export interface BatchLimits {
  maxItems: number;
  /** Total characters of raw bodies: a batch closes once it holds this many (and always holds one). */
  maxChars: number;
}

export const DEFAULT_LIMITS: BatchLimits = { maxItems: 500, maxChars: 16 * 1024 * 1024 };

interface Entry {
  notification: NewCollectionNotification;
  resolve(result: InsertResult): void;
  reject(error: unknown): void;
}

export interface InsertBatcher {
  insert(notification: NewCollectionNotification): Promise<InsertResult>;
  /** Resolves once every insert queued so far has been answered. */
  drain(): Promise<void>;
}

/**
 * Queues inserts and writes them in batches: the first insert waits one turn of the event loop
 * (setImmediate) for others to join it. Up to `inFlight` batches are written at once (1 by
 * default); while that many are being written, the next batch gathers.
 */
/** How a batch is retried apart: whether a failure refused the statement, and whether one row's failure refused that row. */
interface Refusals {
  refusedStatement?: RefusedStatement | undefined;
  /** A single row's failure that was about its content: rejected as UnstorableNotificationError. */
  refusedRow?: RefusedStatement | undefined;
}

export function createInsertBatcher(
  write: WriteBatch,
  options: BatchOptions & Refusals & { limits?: BatchLimits | undefined; inFlight?: number | undefined } = {},
): InsertBatcher {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const inFlight = options.inFlight ?? 1;
  let pending: Entry[] = [];
  const writing = new Set<Promise<void>>();
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    if (writing.size >= inFlight || pending.length === 0) return;
    const batch = take(pending, limits);
    pending = pending.slice(batch.length);
    const written: Promise<void> = run(write, batch, options).finally(() => {
      writing.delete(written);
      if (pending.length > 0) schedule();
    });
    writing.add(written);
    // Cut by the limits: the rest goes next turn if a write is free, else when one ends.
    if (pending.length > 0) schedule();
  };
  const schedule = () => {
    if (scheduled || writing.size >= inFlight) return;
    scheduled = true;
    setImmediate(flush);
  };

  return {
    insert(notification) {
      return new Promise<InsertResult>((resolve, reject) => {
        pending.push({ notification, resolve, reject });
        schedule();
      });
    },
    async drain() {
      while (writing.size > 0 || pending.length > 0) {
        flush();
        await Promise.race(writing);
      }
    },
  };
}

/** The head of the queue, up to the limits (never empty). */
function take(pending: readonly Entry[], limits: BatchLimits): Entry[] {
  let chars = 0;
  let count = 0;
  while (count < pending.length && count < limits.maxItems && (count === 0 || chars < limits.maxChars)) {
    chars += pending[count]!.notification.rawBody.length;
    count += 1;
  }
  return pending.slice(0, count);
}

/** What became of one notification of a batch: its record (null: already stored), or why it failed. */
type Outcome = { record: CollectionNotificationRecord | null; settled: LogPosition } | { error: unknown };

/** Writes one batch and answers each of its entries; never rejects itself. */
async function run(write: WriteBatch, batch: Entry[], options: Pick<BatchOptions, 'batchSizes'> & Refusals): Promise<void> {
  // A settlementId twice in one batch: the first goes to the database, the rest are its duplicates,
  // answered only once the batch has committed (if it fails, the first was never stored).
  const firsts = new Map<string, Entry>();
  for (const entry of batch) {
    if (!firsts.has(entry.notification.settlementId)) firsts.set(entry.notification.settlementId, entry);
  }
  const unique = [...firsts.values()].map((entry) => entry.notification);
  const outcomes = await writeApartOnRefusal(write, unique, options);
  const byId = new Map(unique.map((notification, index) => [notification.settlementId, outcomes[index]!]));
  for (const entry of batch) {
    const outcome = byId.get(entry.notification.settlementId)!;
    if ('error' in outcome) entry.reject(outcome.error);
    else if (firsts.get(entry.notification.settlementId) === entry && outcome.record) {
      entry.resolve({ status: 'inserted', notification: outcome.record, settled: outcome.settled });
    } else entry.resolve({ status: 'duplicate' });
  }
}

/**
 * Writes `notifications` in one statement; when the database refuses it, writes each half apart, and
 * so on down to single rows, so one row the store will not take (whatever the reason) fails alone
 * and its batch-mates are stored. A failure that is not a refusal fails them all at once.
 */
async function writeApartOnRefusal(
  write: WriteBatch,
  notifications: NewCollectionNotification[],
  options: Pick<BatchOptions, 'batchSizes'> & Refusals,
): Promise<Outcome[]> {
  try {
    const { records, settled } = await write(notifications);
    record(options.batchSizes, notifications.length, records.some((record) => record !== null) ? 'committed' : 'rolled-back');
    return records.map((record) => ({ record, settled }));
  } catch (error) {
    record(options.batchSizes, notifications.length, 'failed');
    if (notifications.length === 1 && options.refusedRow?.(error)) return [{ error: new UnstorableNotificationError(error) }];
    if (notifications.length === 1 || !options.refusedStatement?.(error)) return notifications.map(() => ({ error }));
    const half = Math.ceil(notifications.length / 2);
    const first = await writeApartOnRefusal(write, notifications.slice(0, half), options);
    return [...first, ...(await writeApartOnRefusal(write, notifications.slice(half), options))];
  }
}

function record(batchSizes: BatchSizes | undefined, size: number, outcome: BatchOutcome): void {
  try {
    batchSizes?.observe({ outcome }, size);
  } catch {
    // An observer's failure must not change what the inserts are answered.
  }
}
