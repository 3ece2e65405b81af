// What the store's SQLite connection does: its PRAGMAs, transactions, and the batch insert.
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { INSERT_COLUMNS } from './notification-row.ts';
import { SUMMARY_COLUMNS } from './sqlite-summary.ts';

/** Every column the insert writes: the notification as received, then what summaries read. */
const COLUMNS = [...INSERT_COLUMNS, ...SUMMARY_COLUMNS];

// How long a write waits for another process holding the file's write lock, failing after that
// rather than answering 03 at once. Writes here last milliseconds.
const BUSY_TIMEOUT_MS = 5_000;

/** Sets the connection's PRAGMAs; returns the journal mode it got (`wal`, or `memory` in memory). */
export function configureConnection(database: DatabaseSync): string {
  // busy_timeout first: switching to WAL itself needs the lock another process may hold.
  database.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  const mode = String(database.prepare('PRAGMA journal_mode = WAL').get()?.journal_mode);
  // FULL: a commit returns only once the WAL is fsynced, so a 00 survives a power cut (the contract).
  database.exec('PRAGMA synchronous = FULL');
  database.exec('PRAGMA foreign_keys = ON');
  return mode;
}

/**
 * Runs `work` in a write transaction whose commit waits for no fsync (synchronous=NORMAL for it
 * alone): for what need not survive a power cut, only a crash of the process (WAL keeps that), such
 * as a lease. The next durable commit on the connection syncs it with its own.
 */
export function inLightTransaction<T>(database: DatabaseSync, work: () => T, keep: (result: T) => boolean = () => true): T {
  database.exec('PRAGMA synchronous = NORMAL');
  try {
    return inTransaction(database, work, keep);
  } finally {
    database.exec('PRAGMA synchronous = FULL');
  }
}

/** Runs `work` in a write transaction: committed when `keep` says so, rolled back otherwise or when anything throws. */
export function inTransaction<T>(database: DatabaseSync, work: () => T, keep: (result: T) => boolean = () => true): T {
  // IMMEDIATE takes the write lock up front (waiting busy_timeout), instead of failing mid-way.
  database.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    // A failed COMMIT throws here, so the caller never reports a write that did not reach the disk.
    database.exec(keep(result) ? 'COMMIT' : 'ROLLBACK');
    return result;
  } catch (error) {
    if (database.isTransaction) database.exec('ROLLBACK');
    throw error;
  }
}

/** The insert of one notification; it changes nothing when the settlementId is already stored. */
export function prepareInsert(database: DatabaseSync): StatementSync {
  return database.prepare(
    `INSERT INTO collection_notifications (${COLUMNS.join(', ')})
     VALUES (${COLUMNS.map(() => '?').join(', ')})
     ON CONFLICT (settlement_id) DO NOTHING`,
  );
}

/**
 * Inserts rows (values in COLUMNS order, distinct settlementIds) in one transaction, in order,
 * and answers each one's seq, or null for a duplicate. When all were duplicates the
 * transaction only changed the AUTOINCREMENT counter: it is rolled back, costing no fsync, so the
 * bank's retries of notifications we already own stay cheap. `alongside` writes in the same
 * transaction after the rows (true when it wrote anything the commit must keep).
 */
export function insertRows(
  database: DatabaseSync,
  insert: StatementSync,
  rows: readonly SQLInputValue[][],
  alongside: () => boolean = () => false,
): (number | null)[] {
  return inTransaction(
    database,
    () => {
      const seqs = rows.map((values) => {
        // seq is the rowid (INTEGER PRIMARY KEY), so the new row's seq comes back without a RETURNING row.
        const { changes, lastInsertRowid } = insert.run(...values);
        return changes === 1 ? Number(lastInsertRowid) : null;
      });
      return { seqs, wroteAlongside: alongside() };
    },
    ({ seqs, wroteAlongside }) => wroteAlongside || seqs.some((row) => row !== null),
  ).seqs;
}
