import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { LogPosition, NewCollectionNotification } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import { loadMigrations, runMigrations, type Migration, type MigrationTarget } from './migrations.ts';
import type { BatchOptions } from './batch.ts';
import { createStore, type StoreBackend } from './core.ts';
import { selectList, toInsertParams, type NotificationRow } from './notification-row.ts';
import { configureConnection, inTransaction, insertRows, prepareInsert } from './sqlite-connection.ts';
import { daySums, prepareSummaryStatements, pushSummaryValues, rangedPage } from './sqlite-summary.ts';
import type { NotificationStore, StoreSize } from './types.ts';

/** What the SQLite store takes: its logger, and what to tell about each batch. */
export interface SqliteStoreOptions extends BatchOptions {
  logger: Logger;
}

/** Opens the SQLite database at `location` (a path, created with its directories, or `:memory:`) as a store. */
export async function openSqliteStore(location: string, options: SqliteStoreOptions): Promise<NotificationStore> {
  let path = location;
  if (location !== ':memory:') {
    path = resolve(location);
    mkdirSync(dirname(path), { recursive: true });
  }
  return createSqliteStore(new DatabaseSync(path), options);
}

/**
 * A store over an open database: sets its PRAGMAs and migrates it; the store owns and closes it.
 * Inserts are group-committed, batch per tick: every insert that arrives in one turn of the event
 * loop is written in one transaction with one fsync, on this thread: a writer thread, measured
 * against it, cost more in handing rows over than the fsync it took off this thread (docs/benchmarks.md).
 */
export async function createSqliteStore(database: DatabaseSync, options: SqliteStoreOptions): Promise<NotificationStore> {
  try {
    const mode = configureConnection(database);
    if (mode !== 'wal' && mode !== 'memory') {
      options.logger.warn({ journalMode: mode }, 'SQLite could not switch to WAL; writers will block readers');
    }
    await runMigrations(migrationTarget(database), await loadMigrations('sqlite'), options.logger);
    return createStore(backendOver(database, prepareStatements(database)), options);
  } catch (error) {
    if (database.isOpen) database.close();
    throw error;
  }
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

type Statements = ReturnType<typeof prepareStatements>;

// One writer at a time (BEGIN IMMEDIATE), and seq is the rowid drawn inside it: seq order is commit
// order, everything committed is settled, and a position's txid is always 0.
function prepareStatements(database: DatabaseSync) {
  const from = `SELECT ${selectList('0')} FROM collection_notifications`;
  return {
    insert: prepareInsert(database),
    // One statement for any number of ids: they travel as one JSON array.
    getMany: database.prepare(`${from} WHERE settlement_id IN (SELECT value FROM json_each(?))`),
    newest: database.prepare(`${from} WHERE seq < ? ORDER BY seq DESC LIMIT ?`),
    newestOfAccount: database.prepare(`${from} WHERE account_number = ? AND seq < ? ORDER BY seq DESC LIMIT ?`),
    after: database.prepare(`${from} WHERE seq > ? ORDER BY seq LIMIT ?`),
    afterOfAccount: database.prepare(`${from} WHERE account_number = ? AND seq > ? ORDER BY seq LIMIT ?`),
    newestSeq: database.prepare('SELECT seq FROM collection_notifications ORDER BY seq DESC LIMIT 1'),
    hasSeq: database.prepare('SELECT seq FROM collection_notifications WHERE seq = ?'),
    ping: database.prepare('SELECT 1'),
    summary: prepareSummaryStatements(database),
  };
}

// Every row here is at txid 0: a position with a larger txid (from another store) is past them all.
const seqBefore = (position: LogPosition | undefined) => (position === undefined || position.txid > 0 ? Number.MAX_SAFE_INTEGER : position.seq);
const seqAfter = (position: LogPosition) => (position.txid > 0 ? Number.MAX_SAFE_INTEGER : position.seq);
const atSeq = (seq: number): LogPosition => ({ txid: 0, seq });

const rows = (statement: StatementSync, ...params: SQLInputValue[]) => statement.all(...params) as unknown as NotificationRow[];

/** The store's statements on one connection. Each runs synchronously inside its async method: statements never interleave. */
function backendOver(database: DatabaseSync, statements: Statements): StoreBackend {
  const rowOf = (notification: NewCollectionNotification) => pushSummaryValues(toInsertParams(notification), notification);
  const readSize = sizeReader(database);
  return {
    kind: 'sqlite',
    // node:sqlite writes on this thread: a batch is done before the next can start.
    batchesInFlight: 1,
    async insertBatch(notifications) {
      const seqs = insertRows(database, statements.insert, notifications.map(rowOf));
      // Committed in seq order, one writer at a time: everything up to this batch's last row is settled.
      return { positions: seqs.map((seq) => (seq === null ? null : atSeq(seq))), settled: atSeq(Math.max(0, ...seqs.map((seq) => seq ?? 0))) };
    },
    rowsOf: async (settlementIds) => rows(statements.getMany, JSON.stringify(settlementIds)),
    async newestFirst({ accountNumber, before, limit, from, to }) {
      const bound = seqBefore(before);
      if (from !== undefined || to !== undefined) {
        const [statement, params] = rangedPage(statements.summary, { accountNumber, from, to, before: bound, limit });
        return rows(statement, ...params);
      }
      return accountNumber === undefined ? rows(statements.newest, bound, limit) : rows(statements.newestOfAccount, accountNumber, bound, limit);
    },
    async after({ accountNumber, after, limit }) {
      const bound = seqAfter(after);
      return accountNumber === undefined ? rows(statements.after, bound, limit) : rows(statements.afterOfAccount, accountNumber, bound, limit);
    },
    async settledHead() {
      const row = statements.newestSeq.get();
      return row && atSeq(Number(row.seq));
    },
    positionOfSeq: async (seq) => (statements.hasSeq.get(seq) ? atSeq(seq) : undefined),
    daySums: async (days, accountNumber) => daySums(database, statements.summary, days, accountNumber),
    size: async () => readSize(),
    ping: async () => void statements.ping.get(),
    refusedStatement,
    close: async () => database.close(),
  };
}

/**
 * SQLite's primary result codes that mean the database itself cannot write now (busy, locked, out of
 * memory, read-only, I/O error, corrupt, full, cannot open): every part of a batch would fail alike.
 * Anything else (a constraint, a trigger's RAISE, a value too big) is about the rows.
 */
const WHOLE_DATABASE_FAILURES = new Set([5, 6, 7, 8, 10, 11, 13, 14]);

function refusedStatement(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code !== 'number' || !WHOLE_DATABASE_FAILURES.has(code & 0xff);
}

/**
 * The store's size without a scan: the file's pages, and the span of seq (the rowid: its min and its
 * max are one B-tree descent each). AUTOINCREMENT never reuses a seq and a rolled-back or duplicate
 * insert takes none, so the span is the row count unless rows in the middle were deleted; archiving
 * the oldest (docs/operations.md) keeps it exact.
 */
function sizeReader(database: DatabaseSync): () => StoreSize {
  const statement = database.prepare(`SELECT
    (SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size()) AS bytes,
    coalesce((SELECT max(seq) FROM collection_notifications) - (SELECT min(seq) FROM collection_notifications) + 1, 0) AS rows`);
  return () => {
    const row = statement.get() as { bytes: number; rows: number };
    return { bytes: Number(row.bytes), approximateRows: Number(row.rows) };
  };
}
