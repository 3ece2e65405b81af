import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { NewCollectionNotification } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import { loadMigrations, runMigrations, type Migration, type MigrationTarget } from './migrations.ts';
import type { BatchOptions } from './batch.ts';
import { createStore, type StoreBackend } from './core.ts';
import { toInsertParams } from './notification-row.ts';
import { configureConnection, inTransaction, insertRows, prepareInsert } from './sqlite-connection.ts';
import { startSqliteReader, type SqliteReader } from './sqlite-reader.ts';
import { createSqliteConfirmationLog } from './sqlite-confirmation-log.ts';
import { createSqliteConfirmations } from './sqlite-confirmations.ts';
import { createSqliteQuarantine } from './sqlite-quarantine.ts';
import { atSeq, createSqliteReads, HEAVY_READS, type HeavyRead, type SqliteReads } from './sqlite-reads.ts';
import { pushSummaryValues } from './sqlite-summary.ts';
import type { CollectionStore, StoreSize } from './types.ts';

/** What the SQLite store takes: its logger, and what to tell about each batch. */
export interface SqliteStoreOptions extends BatchOptions {
  logger: Logger;
}

/** Opens the SQLite database at `location` (a path, created with its directories, or `:memory:`) as a store. */
export async function openSqliteStore(location: string, options: SqliteStoreOptions): Promise<CollectionStore> {
  if (location === ':memory:') return createSqliteStore(new DatabaseSync(location), options);
  const path = resolve(location);
  mkdirSync(dirname(path), { recursive: true });
  return createSqliteStore(new DatabaseSync(path), { ...options, readerPath: path });
}

/**
 * A store over an open database: sets its PRAGMAs and migrates it; the store owns and closes it.
 * Inserts are group-committed, batch per tick: every insert that arrives in one turn of the event
 * loop is written in one transaction with one fsync, on this thread: a writer thread, measured
 * against it, cost more in handing rows over than the fsync it took off this thread (docs/benchmarks.md, "What shapes the code").
 * With `readerPath` (a file), the reads a GraphQL caller can make heavy run on a reader thread of
 * their own, so none of them holds the event loop that answers the bank; an in-memory database has
 * no second connection, so there they run here.
 */
export async function createSqliteStore(
  database: DatabaseSync,
  options: SqliteStoreOptions & { readerPath?: string },
): Promise<CollectionStore> {
  try {
    const mode = configureConnection(database);
    if (mode !== 'wal' && mode !== 'memory') {
      options.logger.warn({ journalMode: mode }, 'SQLite could not switch to WAL; writers will block readers');
    }
    await runMigrations(migrationTarget(database), await loadMigrations('sqlite'), options.logger);
    const reader = options.readerPath === undefined ? undefined : startSqliteReader(options.readerPath, options.logger);
    return createStore(backendOver(database, reader), options);
  } catch (error) {
    if (database.isOpen) database.close();
    throw error;
  }
}

function migrationTarget(database: DatabaseSync): MigrationTarget {
  const isRecorded = (version: number) => database.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(version) !== undefined;
  return {
    // SQLite has no advisory lock: each apply takes the write lock (BEGIN IMMEDIATE) and re-checks.
    withLock: (work) => work(),
    async ensureTable() {
      database.exec(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT',
      );
    },
    async applied() {
      const rows = database.prepare('SELECT version, name FROM schema_migrations').all();
      return new Map(rows.map((row) => [Number(row.version), String(row.name)]));
    },
    async missingTables(tables) {
      const found = database
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (SELECT value FROM json_each(?))")
        .all(JSON.stringify(tables));
      return tables.filter((table) => !found.some((row) => row.name === table));
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

/**
 * The store's statements on the main connection (one writer at a time, BEGIN IMMEDIATE, and seq is
 * the rowid drawn inside it: seq order is commit order, everything committed is settled, and a
 * position's txid is always 0), with the heavy reads on `reader` when there is one.
 */
function backendOver(database: DatabaseSync, reader: SqliteReader | undefined): StoreBackend {
  const insert = prepareInsert(database);
  const ping = database.prepare('SELECT 1');
  const identity = String(database.prepare('SELECT id FROM store_identity').get()?.id);
  const local = createSqliteReads(database);
  const heavy: HeavyReads = reader ?? onThisThread(local);
  const rowOf = (notification: NewCollectionNotification) => pushSummaryValues(toInsertParams(notification), notification);
  const readSize = sizeReader(database);
  const confirmations = createSqliteConfirmations(database);
  return {
    kind: 'sqlite',
    identity,
    // node:sqlite writes on this thread: a batch is done before the next can start.
    batchesInFlight: 1,
    async insertBatch(notifications) {
      // The confirmer's outcomes waiting for a commit take this one: no fsync of their own.
      const riders = confirmations.board(notifications.length);
      let seqs;
      try {
        seqs = insertRows(database, insert, notifications.map(rowOf), () => riders.write());
      } catch (error) {
        riders.failed();
        throw error;
      }
      riders.committed();
      // Committed in seq order, one writer at a time: everything up to this batch's last row is settled.
      return {
        positions: seqs.map((seq) => (seq === null ? null : atSeq(seq))),
        settled: atSeq(Math.max(0, ...seqs.map((seq) => seq ?? 0))),
      };
    },
    rowsOf: (settlementIds) => heavy.rowsOf(settlementIds),
    rowOfSession: (sessionId) => heavy.rowOfSession(sessionId),
    newestFirst: (page) => heavy.newestFirst(page),
    // The log's own reads are small and follow the webhook's commits: on this connection.
    after: async (page) => local.after(page),
    settledHead: async () => local.settledHead(),
    // Everything committed is settled.
    committedHead: async () => local.settledHead(),
    confirmations,
    confirmationLog: createSqliteConfirmationLog(database),
    daySums: (days, filter, confirmed) => heavy.daySums(days, filter, confirmed),
    quarantine: createSqliteQuarantine(database, heavy),
    size: async () => readSize(),
    ping: async () => void ping.get(),
    refusedStatement,
    refusedRow,
    async close() {
      await reader?.close();
      database.close();
    },
  };
}

type HeavyReads = Omit<SqliteReader, 'close'>;

/** The heavy reads on this thread's connection: an in-memory database has no other. */
function onThisThread(reads: SqliteReads): HeavyReads {
  const call =
    (name: HeavyRead) =>
    async (...args: unknown[]) =>
      (reads[name] as (...values: unknown[]) => unknown)(...args);
  return Object.fromEntries(HEAVY_READS.map((name) => [name, call(name)])) as HeavyReads;
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

/** The primary result codes about a row's content: a value too big, a constraint (a trigger's RAISE too), a type STRICT refuses. */
const ROW_REFUSALS = new Set([18, 19, 20]);

function refusedRow(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && ROW_REFUSALS.has(code & 0xff);
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
