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
  /** An operator's RECHECK: recorded over any status but CONFIRMED. */
  overDecided: boolean;
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
  // The oldest due first, found through the index of PENDING notifications; a probe only among
  // those no ask has failed about.
  const claim = (probe: string) =>
    database.prepare(`UPDATE collection_notifications SET confirmation_due_ms = ?
      WHERE seq IN (SELECT seq FROM collection_notifications
        WHERE confirmation_status = 'PENDING' AND confirmation_due_ms <= ?${probe} ORDER BY seq LIMIT ?)
      RETURNING ${selectList('0')}`);
  // An answer of the bank's: an ask, and its decision (the log of confirmations' trigger takes a CONFIRMED one).
  const record = (over: string) =>
    database.prepare(`UPDATE collection_notifications
      SET confirmation_status = ?, confirmation_checked_at = ?, confirmation_differences = ?, acknowledged_by_bank = ?,
        confirmation_attempts = confirmation_attempts + 1, confirmation_failures = 0,
        confirmation_decided_by = NULL, confirmation_reason = NULL
      WHERE settlement_id = ? AND ${over}`);
  const statements = {
    claim: claim(''),
    probe: claim(' AND confirmation_failures = 0'),
    record: record("confirmation_status = 'PENDING'"),
    recordOverDecided: record("confirmation_status <> 'CONFIRMED'"),
    // An ask that decided nothing: a failure counts towards its backoff; a not-found answer keeps the
    // first one's time (a reopened notification starts again from this one).
    retry: database.prepare(`UPDATE collection_notifications
      SET confirmation_status = 'PENDING', confirmation_due_ms = :due, confirmation_attempts = confirmation_attempts + 1,
        confirmation_failures = CASE WHEN :kind = 'failed' THEN confirmation_failures + 1 ELSE 0 END,
        confirmation_not_found_at = CASE
          WHEN :kind <> 'not-found' THEN confirmation_not_found_at
          WHEN confirmation_status = 'PENDING' THEN coalesce(confirmation_not_found_at, :at)
          ELSE :at END
      WHERE settlement_id = :id
        AND (confirmation_status = 'PENDING' OR (:reopen = 1 AND confirmation_status IN ('MISMATCHED', 'UNCHECKED')))`),
    defer: database.prepare(`UPDATE collection_notifications SET confirmation_due_ms = ?
      WHERE settlement_id IN (SELECT value FROM json_each(?)) AND confirmation_status = 'PENDING'`),
    decide: database.prepare(`UPDATE collection_notifications
      SET confirmation_status = ?, confirmation_checked_at = ?, confirmation_differences = '[]', acknowledged_by_bank = NULL,
        confirmation_decided_by = ?, confirmation_reason = ?
      WHERE settlement_id = ? AND confirmation_status = 'PENDING'
      RETURNING ${selectList('0')}`),
    statusOf: database.prepare('SELECT confirmation_status FROM collection_notifications WHERE settlement_id = ?'),
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
        const { changes } = (rider.overDecided ? statements.recordOverDecided : statements.record).run(
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
    async claim({ limit, leaseMs, probe }) {
      const now = Date.now();
      return inLightTransaction(
        database,
        () => (probe ? statements.probe : statements.claim).all(now + leaseMs, now, limit) as unknown as NotificationRow[],
        (claimed) => claimed.length > 0,
      );
    },
    record(outcomes, overDecided) {
      const recorded = Promise.all(
        outcomes.map((outcome) => new Promise<boolean>((resolve, reject) => waiting.push({ outcome, overDecided, resolve, reject }))),
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
    async retry(retries) {
      const now = Date.now();
      return inLightTransaction(
        database,
        () =>
          retries.map(
            (retry) =>
              statements.retry.run({
                due: now + retry.delayMs,
                kind: retry.kind,
                at: retry.at,
                id: retry.settlementId,
                reopen: retry.reopen === true ? 1 : 0,
              }).changes === 1,
          ),
        (recorded) => recorded.some(Boolean),
      );
    },
    // A decision by hand is kept like a money record: committed durably before it is answered.
    async decide({ settlementId, status, decidedBy, reason, decidedAt }) {
      return inTransaction(
        database,
        () => {
          const [row] = statements.decide.all(status, decidedAt, decidedBy, reason, settlementId) as unknown as NotificationRow[];
          if (row) return { decided: row };
          const current = statements.statusOf.get(settlementId);
          return { current: current === undefined ? undefined : String(current.confirmation_status) };
        },
        (result) => 'decided' in result,
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
