// The SQLite store's confirmation queue, on the main connection: the one the webhook writes on, where
// every durable commit is an fsync the event loop waits for. So what confirmation writes takes none
// of its own where it can:
// - outcomes ride the webhook's next batch (one transaction, one fsync, whatever both hold), or,
//   when no delivery comes within a turn of the event loop, commit in a transaction of their own;
// - claims and deferrals only move a due time, which need not survive a power cut (a lost lease makes
//   a row due sooner, on a replica that is gone anyway; a crash of the process keeps it, in the WAL),
//   so they wait for no fsync: the next durable commit syncs them with its own.
import type { DatabaseSync } from 'node:sqlite';
import type { ConfirmationOutcome } from '../domain/index.ts';
import type { ConfirmationBackend } from './core.ts';
import { differencesColumn, selectList, type NotificationRow } from './notification-row.ts';
import { inLightTransaction, inTransaction } from './sqlite-connection.ts';

/**
 * A batch of several deliveries this recent means a busy webhook (deliveries arrive faster than one
 * commit each): outcomes then wait for its next batch. A quieter one is not waited for: it would
 * only delay them.
 */
const BUSY_WEBHOOK_MS = 20;
/** How long they wait for it at most before committing on their own. */
const RIDE_WAIT_MS = 10;

/** An outcome waiting for a commit, and whoever waits for it. */
interface Rider {
  outcome: ConfirmationOutcome;
  resolve(recorded: boolean): void;
  reject(error: unknown): void;
}

/** What the webhook's batch does with the outcomes waiting: writes them inside its transaction, then answers them. */
export interface Riders {
  /** Inside the open transaction: writes each outcome; true when any was recorded (the transaction must commit). */
  write(): boolean;
  /** After the commit: each answered. */
  committed(): void;
  /** The transaction failed: they wait again, for the next commit. */
  failed(): void;
}

/**
 * The queue's statements; due times are epoch milliseconds of this process's clock (one process
 * writes a SQLite file at a time). `board(deliveries)`: a batch of that many deliveries is about to
 * be written, and takes the outcomes waiting along.
 */
export function createSqliteConfirmations(database: DatabaseSync): ConfirmationBackend & { board(deliveries: number): Riders } {
  const statements = {
    // The oldest due first, found through the index of PENDING notifications.
    claim: database.prepare(`UPDATE collection_notifications
      SET confirmation_due_ms = ?, confirmation_attempts = confirmation_attempts + 1
      WHERE seq IN (SELECT seq FROM collection_notifications WHERE confirmation_status = 'PENDING' AND confirmation_due_ms <= ? ORDER BY seq LIMIT ?)
      RETURNING ${selectList('0')}`),
    record: database.prepare(`UPDATE collection_notifications
      SET confirmation_status = ?, confirmation_checked_at = ?, confirmation_differences = ?, acknowledged_by_bank = ?
      WHERE settlement_id = ? AND confirmation_status = 'PENDING'`),
    defer: database.prepare(`UPDATE collection_notifications SET confirmation_due_ms = ?
      WHERE settlement_id IN (SELECT value FROM json_each(?)) AND confirmation_status = 'PENDING'`),
    countPending: database.prepare("SELECT count(*) AS n FROM collection_notifications WHERE confirmation_status = 'PENDING'"),
    oldestPending: database.prepare(
      "SELECT received_at FROM collection_notifications WHERE confirmation_status = 'PENDING' ORDER BY seq LIMIT 1",
    ),
  };
  let waiting: Rider[] = [];
  let scheduled = false;

  /** Writes riders inside the open transaction, each in a savepoint: one that fails fails alone, never the transaction. */
  const writeAll = (riders: readonly Rider[]) =>
    riders.map((rider) => {
      const { outcome } = rider;
      const acknowledged = outcome.acknowledgedByBank === null ? null : Number(outcome.acknowledgedByBank);
      database.exec('SAVEPOINT outcome');
      try {
        const { changes } = statements.record.run(
          outcome.status,
          outcome.checkedAt,
          differencesColumn(outcome),
          acknowledged,
          outcome.settlementId,
        );
        database.exec('RELEASE outcome');
        return { rider, recorded: changes === 1 };
      } catch (error) {
        database.exec('ROLLBACK TO outcome');
        database.exec('RELEASE outcome');
        return { rider, error };
      }
    });
  const answer = (results: ReturnType<typeof writeAll>) => {
    for (const result of results) {
      if ('error' in result) result.rider.reject(result.error);
      else result.rider.resolve(result.recorded);
    }
  };

  /** Outcomes no batch took: a transaction of their own. */
  const writeAlone = () => {
    scheduled = false;
    const riders = waiting;
    waiting = [];
    if (riders.length === 0) return;
    try {
      answer(
        inTransaction(
          database,
          () => writeAll(riders),
          (results) => results.some((result) => 'recorded' in result && result.recorded),
        ),
      );
    } catch (error) {
      for (const rider of riders) rider.reject(error);
    }
  };
  /** When the last batch of several deliveries was written. */
  let lastBusyBatch = Number.NEGATIVE_INFINITY;
  // While deliveries keep coming, the next batch takes them along (a busy webhook leaves a turn
  // without one now and then, so they wait a little for it); otherwise they go two turns later,
  // after any batch gathered in the next turn.
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    if (performance.now() - lastBusyBatch < BUSY_WEBHOOK_MS) setTimeout(writeAlone, RIDE_WAIT_MS);
    else setImmediate(() => setImmediate(writeAlone));
  };

  return {
    async claim({ limit, leaseMs }) {
      const now = Date.now();
      return inLightTransaction(
        database,
        () => statements.claim.all(now + leaseMs, now, limit) as unknown as NotificationRow[],
        (claimed) => claimed.length > 0,
      );
    },
    record(outcomes) {
      const recorded = Promise.all(
        outcomes.map((outcome) => new Promise<boolean>((resolve, reject) => waiting.push({ outcome, resolve, reject }))),
      );
      schedule();
      return recorded;
    },
    board(deliveries) {
      if (deliveries > 1) lastBusyBatch = performance.now();
      const riders = waiting;
      waiting = [];
      let results: ReturnType<typeof writeAll> = [];
      return {
        write() {
          results = writeAll(riders);
          return results.some((result) => 'recorded' in result && result.recorded);
        },
        committed: () => answer(results),
        failed() {
          waiting = [...riders, ...waiting];
          if (waiting.length > 0) schedule();
        },
      };
    },
    async defer(settlementIds, delayMs) {
      inLightTransaction(
        database,
        () => statements.defer.run(Date.now() + delayMs, JSON.stringify(settlementIds)).changes,
        (changed) => changed > 0,
      );
    },
    async countPending() {
      return Number(statements.countPending.get()?.n);
    },
    async oldestPending() {
      const row = statements.oldestPending.get();
      return row === undefined ? null : String(row.received_at);
    },
  };
}
