import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { Logger } from '../logger.ts';
import { loadMigrations, runMigrations, type Migration, type MigrationTarget } from './migrations.ts';
import {
  INSERT_COLUMNS,
  SELECT_LIST,
  checkLimit,
  inRequestedOrder,
  toInsertParams,
  toRecord,
  upperSeqBound,
  type NotificationRow,
} from './notification-row.ts';
import type { NotificationStore } from './types.ts';

// How long a write waits for another process holding the file's write lock. node:sqlite blocks the
// event loop meanwhile, but writes here last milliseconds, and failing at once would answer 03.
const BUSY_TIMEOUT_MS = 5_000;

/** Opens the SQLite database at `location` (a path, created with its directories, or `:memory:`) as a store. */
export async function openSqliteStore(location: string, options: { logger: Logger }): Promise<NotificationStore> {
  let path = location;
  if (location !== ':memory:') {
    path = resolve(location);
    mkdirSync(dirname(path), { recursive: true });
  }
  return createSqliteStore(new DatabaseSync(path), options);
}

/** A store over an open database: sets its PRAGMAs and migrates it; the store owns and closes it. */
export async function createSqliteStore(database: DatabaseSync, options: { logger: Logger }): Promise<NotificationStore> {
  try {
    configure(database, options.logger);
    await runMigrations(migrationTarget(database), await loadMigrations('sqlite'), options.logger);
    return storeOver(database, prepareStatements(database));
  } catch (error) {
    if (database.isOpen) database.close();
    throw error;
  }
}

function configure(database: DatabaseSync, logger: Logger): void {
  // busy_timeout first: switching to WAL itself needs the lock another process may hold.
  database.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  const mode = database.prepare('PRAGMA journal_mode = WAL').get()?.journal_mode;
  if (mode !== 'wal' && mode !== 'memory') {
    logger.warn({ journalMode: mode }, 'SQLite could not switch to WAL; writers will block readers');
  }
  // FULL: a commit returns only once the WAL is fsynced, so a 00 survives a power cut (the contract).
  database.exec('PRAGMA synchronous = FULL');
  database.exec('PRAGMA foreign_keys = ON');
}

function migrationTarget(database: DatabaseSync): MigrationTarget {
  const isRecorded = (version: number) =>
    database.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(version) !== undefined;
  return {
    // SQLite has no advisory lock: each apply takes the write lock (BEGIN IMMEDIATE) and re-checks.
    withLock: (work) => work(),
    async ensureTable() {
      database.exec(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT',
      );
    },
    async appliedVersions() {
      const rows = database.prepare('SELECT version FROM schema_migrations').all();
      return new Set(rows.map((row) => Number(row.version)));
    },
    async apply(migration: Migration) {
      return inTransaction(database, () => {
        if (isRecorded(migration.version)) return false;
        database.exec(migration.sql);
        database
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, new Date().toISOString());
        return true;
      });
    },
  };
}

/** Runs `work` in a write transaction: committed when it returns, rolled back when anything throws. */
function inTransaction<T>(database: DatabaseSync, work: () => T, keep: (result: T) => boolean = () => true): T {
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

type Statements = ReturnType<typeof prepareStatements>;

function prepareStatements(database: DatabaseSync) {
  const from = `SELECT ${SELECT_LIST} FROM collection_notifications`;
  return {
    insert: database.prepare(
      `INSERT INTO collection_notifications (${INSERT_COLUMNS.join(', ')})
       VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')})
       ON CONFLICT (settlement_id) DO NOTHING
       RETURNING ${SELECT_LIST}`,
    ),
    // One statement for any number of ids: they travel as one JSON array.
    getMany: database.prepare(`${from} WHERE settlement_id IN (SELECT value FROM json_each(?))`),
    newest: database.prepare(`${from} WHERE seq < ? ORDER BY seq DESC LIMIT ?`),
    newestOfAccount: database.prepare(`${from} WHERE account_number = ? AND seq < ? ORDER BY seq DESC LIMIT ?`),
    after: database.prepare(`${from} WHERE seq > ? ORDER BY seq LIMIT ?`),
    afterOfAccount: database.prepare(`${from} WHERE account_number = ? AND seq > ? ORDER BY seq LIMIT ?`),
    ping: database.prepare('SELECT 1'),
  };
}

function records(statement: StatementSync, ...params: SQLInputValue[]) {
  return (statement.all(...params) as unknown as NotificationRow[]).map(toRecord);
}

function storeOver(database: DatabaseSync, statements: Statements): NotificationStore {
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new Error('The sqlite store is closed');
  };
  // Every method runs synchronously inside its async body: statements of one process never interleave.
  return {
    kind: 'sqlite',
    async insert(notification) {
      assertOpen();
      // A duplicate changed only the AUTOINCREMENT counter: rolled back, it costs no write and no
      // fsync, so the bank's retries of a notification we already own stay cheap.
      const [inserted] = inTransaction(
        database,
        () => records(statements.insert, ...toInsertParams(notification)),
        (rows) => rows.length > 0,
      );
      return inserted ? { status: 'inserted', notification: inserted } : { status: 'duplicate' };
    },
    async getMany(settlementIds) {
      assertOpen();
      if (settlementIds.length === 0) return [];
      return inRequestedOrder(settlementIds, records(statements.getMany, JSON.stringify(settlementIds)));
    },
    async listNewestFirst({ accountNumber, beforeSeq, limit }) {
      assertOpen();
      const before = upperSeqBound(beforeSeq);
      return accountNumber === undefined
        ? records(statements.newest, before, checkLimit(limit))
        : records(statements.newestOfAccount, accountNumber, before, checkLimit(limit));
    },
    async listAfter({ accountNumber, afterSeq, limit }) {
      assertOpen();
      return accountNumber === undefined
        ? records(statements.after, afterSeq, checkLimit(limit))
        : records(statements.afterOfAccount, accountNumber, afterSeq, checkLimit(limit));
    },
    async ping() {
      assertOpen();
      statements.ping.get();
    },
    async close() {
      if (closed) return;
      closed = true;
      database.close();
    },
  };
}
