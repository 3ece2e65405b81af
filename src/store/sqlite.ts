import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { START_OF_LOG, type LogPosition, type NewCollectionNotification } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import { loadMigrations, runMigrations, type Migration, type MigrationTarget } from './migrations.ts';
import { createInsertBatcher, type BatchOptions } from './batch.ts';
import { checkLimit, inRequestedOrder, insertedRecord, selectList, toInsertParams, toRecord, type NotificationRow } from './notification-row.ts';
import { configureConnection, inTransaction, insertRows, prepareInsert } from './sqlite-connection.ts';
import { prepareSummaryStatements, rangedPage, summarize, summaryColumnValues } from './sqlite-summary.ts';
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
 * loop is written in one transaction with one fsync, on this thread. A writer thread was measured
 * against it (npm run bench, 2 cores): handing each batch's rows to another thread and back cost
 * more than the fsync it took off this thread, about 0.6x the acks/s of batch per tick.
 */
export async function createSqliteStore(database: DatabaseSync, options: SqliteStoreOptions): Promise<NotificationStore> {
  try {
    const mode = configureConnection(database);
    if (mode !== 'wal' && mode !== 'memory') {
      options.logger.warn({ journalMode: mode }, 'SQLite could not switch to WAL; writers will block readers');
    }
    await runMigrations(migrationTarget(database), await loadMigrations('sqlite'), options.logger);
    return storeOver(database, prepareStatements(database), options);
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

function records(statement: StatementSync, ...params: SQLInputValue[]) {
  return (statement.all(...params) as unknown as NotificationRow[]).map(toRecord);
}

function storeOver(database: DatabaseSync, statements: Statements, options: BatchOptions): NotificationStore {
  let closing: Promise<void> | undefined;
  const assertOpen = () => {
    if (closing) throw new Error('The sqlite store is closed');
  };
  const rowOf = (notification: NewCollectionNotification) => [...toInsertParams(notification), ...summaryColumnValues(notification)];
  const readSize = sizeReader(database);
  const batcher = createInsertBatcher(async (notifications) => {
    const seqs = insertRows(database, statements.insert, notifications.map(rowOf));
    const records = seqs.map((seq, index) => (seq === null ? null : insertedRecord(notifications[index]!, atSeq(seq))));
    // Committed in seq order, one writer at a time: everything up to this batch's last row is settled.
    return { records, settled: atSeq(Math.max(0, ...seqs.map((seq) => seq ?? 0))) };
  }, options);
  // Every read runs synchronously inside its async body: statements of one connection never interleave.
  return {
    kind: 'sqlite',
    async insert(notification) {
      assertOpen();
      return batcher.insert(notification);
    },
    async getMany(settlementIds) {
      assertOpen();
      if (settlementIds.length === 0) return [];
      return inRequestedOrder(settlementIds, records(statements.getMany, JSON.stringify(settlementIds)));
    },
    async listNewestFirst({ accountNumber, before, limit, from, to }) {
      assertOpen();
      const bound = seqBefore(before);
      if (from !== undefined || to !== undefined) {
        const [statement, params] = rangedPage(statements.summary, { accountNumber, from, to, before: bound, limit: checkLimit(limit) });
        return records(statement, ...params);
      }
      return accountNumber === undefined
        ? records(statements.newest, bound, checkLimit(limit))
        : records(statements.newestOfAccount, accountNumber, bound, checkLimit(limit));
    },
    async listAfter({ accountNumber, after, limit }) {
      assertOpen();
      const bound = seqAfter(after);
      return accountNumber === undefined
        ? records(statements.after, bound, checkLimit(limit))
        : records(statements.afterOfAccount, accountNumber, bound, checkLimit(limit));
    },
    async settledHead() {
      assertOpen();
      const row = statements.newestSeq.get();
      return row ? atSeq(Number(row.seq)) : START_OF_LOG;
    },
    async positionOfSeq(seq) {
      assertOpen();
      return statements.hasSeq.get(seq) ? atSeq(seq) : undefined;
    },
    async summarize(query) {
      assertOpen();
      return summarize(database, statements.summary, query);
    },
    async size() {
      assertOpen();
      return readSize();
    },
    async ping() {
      assertOpen();
      statements.ping.get();
    },
    close() {
      // Inserts already queued are written and answered first: a SIGTERM drain loses none.
      closing ??= batcher.drain().then(() => database.close());
      return closing;
    },
  };
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
