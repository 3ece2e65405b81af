// Group commit, the same for every backend: inserts that arrive while the store is busy (or within
// one turn of the event loop) are written together, in one transaction with one durable commit,
// and each caller still gets its own answer.
import type { CollectionNotificationRecord, LogPosition, NewCollectionNotification } from '../domain/index.ts';
import type { InsertResult } from './types.ts';

/** What one batch came to; for tests and the batch-size metric. */
export interface BatchReport {
  /** Inserts answered by this batch, duplicates within it included. */
  size: number;
  /** Rows it stored. */
  inserted: number;
  /** `rolled-back`: every insert was a duplicate, so nothing needed a durable commit. */
  outcome: 'committed' | 'rolled-back' | 'failed';
  /** How long the write took, commit included (on SQLite, synchronous: the event loop was held as long). */
  ms: number;
}

/** Options every store takes about its batches. */
export interface BatchOptions {
  /** Called once per batch, after its commit, rollback or failure. */
  onBatch?: ((report: BatchReport) => void) | undefined;
}

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
export function createInsertBatcher(
  write: WriteBatch,
  options: BatchOptions & { limits?: BatchLimits | undefined; inFlight?: number | undefined } = {},
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
    const written: Promise<void> = run(write, batch, options.onBatch).finally(() => {
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

/** Writes one batch and answers each of its entries; never rejects itself. */
async function run(write: WriteBatch, batch: Entry[], onBatch: BatchOptions['onBatch']): Promise<void> {
  // A settlementId twice in one batch: the first goes to the database, the rest are its duplicates,
  // answered only once the batch has committed (if it fails, the first was never stored).
  const firsts = new Map<string, Entry>();
  for (const entry of batch) {
    if (!firsts.has(entry.notification.settlementId)) firsts.set(entry.notification.settlementId, entry);
  }
  let stored: Map<string, CollectionNotificationRecord>;
  let settled: LogPosition;
  const started = performance.now();
  const ms = () => performance.now() - started;
  try {
    const unique = [...firsts.values()].map((entry) => entry.notification);
    let records;
    ({ records, settled } = await write(unique));
    stored = new Map();
    records.forEach((record, index) => record && stored.set(unique[index]!.settlementId, record));
  } catch (error) {
    report(onBatch, { size: batch.length, inserted: 0, outcome: 'failed', ms: ms() });
    for (const entry of batch) entry.reject(error);
    return;
  }
  report(onBatch, { size: batch.length, inserted: stored.size, outcome: stored.size > 0 ? 'committed' : 'rolled-back', ms: ms() });
  for (const entry of batch) {
    const { settlementId } = entry.notification;
    const record = firsts.get(settlementId) === entry ? stored.get(settlementId) : undefined;
    entry.resolve(record ? { status: 'inserted', notification: record, settled } : { status: 'duplicate' });
  }
}

function report(onBatch: BatchOptions['onBatch'], batch: BatchReport): void {
  try {
    onBatch?.(batch);
  } catch {
    // An observer's failure must not change what the inserts are answered.
  }
}
