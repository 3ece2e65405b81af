import pg from 'pg';
import type { NewCollectionNotification } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import { createInsertBatcher, type BatchOptions } from './batch.ts';
import { loadMigrations, runMigrations, type Migration, type MigrationTarget } from './migrations.ts';
import {
  INSERT_COLUMNS,
  SELECT_LIST,
  checkLimit,
  inRequestedOrder,
  insertedRecord,
  toInsertParams,
  toRecord,
  upperSeqBound,
  type NotificationRow,
} from './notification-row.ts';
import { SUMMARY_QUERIES, rangedPage, summarize } from './postgres-summary.ts';
import type { NotificationStore, StoreSize } from './types.ts';

const POOL_SETTINGS = {
  // Inserts go one batch at a time on one connection; the rest serve reads.
  max: 10,
  // Opening a connection, and waiting for a free one, fails after this rather than stalling a webhook.
  connectionTimeoutMillis: 5_000,
  idleTimeoutMillis: 30_000,
  // A stuck database (or a lock held too long) gives an error (webhook 03, bank retries), not a hang.
  statement_timeout: 5_000,
  // Client-side backstop for a server or network that stops answering altogether.
  query_timeout: 10_000,
  // A replica that stalls mid-insert must not hold the insert lock for everyone else.
  idle_in_transaction_session_timeout: 10_000,
  keepAlive: true,
  application_name: 'bank-subgraph',
} satisfies pg.PoolConfig;

// Migrations may rewrite tables; they run once, at start, on a connection of their own.
const MIGRATION_TIMEOUT_MS = 120_000;

// Fixed application keys for pg_advisory_*lock (one namespace per database).
const MIGRATION_LOCK_KEY = 7_314_001;
const INSERT_LOCK_KEY = 7_314_002;

const FROM = `SELECT ${SELECT_LIST} FROM collection_notifications`;
const QUERIES = {
  // A whole batch in one statement: one text[] per column, so its parameters are 17 whatever the
  // batch's size (PostgreSQL allows 65,535), and one prepared plan serves every batch.
  insert: `INSERT INTO collection_notifications (${INSERT_COLUMNS.join(', ')})
    SELECT * FROM unnest(${INSERT_COLUMNS.map((_, index) => `$${index + 1}::text[]`).join(', ')})
    ON CONFLICT (settlement_id) DO NOTHING
    RETURNING seq, settlement_id`,
  getMany: `${FROM} WHERE settlement_id = ANY($1::text[])`,
  newest: `${FROM} WHERE seq < $1 ORDER BY seq DESC LIMIT $2`,
  newestOfAccount: `${FROM} WHERE account_number = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`,
  after: `${FROM} WHERE seq > $1 ORDER BY seq LIMIT $2`,
  afterOfAccount: `${FROM} WHERE account_number = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
  newestInRange: SUMMARY_QUERIES.newestInRange,
  newestOfAccountInRange: SUMMARY_QUERIES.newestOfAccountInRange,
  newestSince: SUMMARY_QUERIES.newestSince,
  newestOfAccountSince: SUMMARY_QUERIES.newestOfAccountSince,
};

/**
 * Connects to PostgreSQL at `url`, migrates the schema, and returns the store over a pool. Inserts
 * are group-committed: one batch at a time, one statement and one commit per batch; while it is
 * written, the next gathers.
 */
export async function createPostgresStore(url: string, options: BatchOptions & { logger: Logger }): Promise<NotificationStore> {
  const { logger } = options;
  await migrate(url, logger);
  const pool = new pg.Pool({ connectionString: url, ...POOL_SETTINGS });
  // Without a listener, an idle connection dropped by the server would crash the process.
  pool.on('error', (error) => logger.warn({ err: error }, 'an idle PostgreSQL connection failed; the pool replaces it'));
  try {
    return storeOver(pool, await beginInsertSql(pool, logger), options);
  } catch (error) {
    await pool.end();
    throw error;
  }
}

async function migrate(url: string, logger: Logger): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    ...POOL_SETTINGS,
    statement_timeout: MIGRATION_TIMEOUT_MS,
    query_timeout: MIGRATION_TIMEOUT_MS + 5_000,
  });
  // Failures surface through the awaited calls below; this only keeps a late socket error from crashing.
  client.on('error', (error) => logger.warn({ err: error }, 'the PostgreSQL migration connection failed'));
  await client.connect();
  try {
    await runMigrations(migrationTarget(client), await loadMigrations('postgres'), logger);
  } finally {
    await client.end();
  }
}

function migrationTarget(client: pg.Client): MigrationTarget {
  return {
    // Replicas starting together queue here; the first migrates, the others find nothing left to do.
    async withLock(work) {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      try {
        return await work();
      } finally {
        // Ending the session releases the lock too, so a failed unlock changes nothing.
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
      }
    },
    async ensureTable() {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
    },
    async appliedVersions() {
      const result = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      return new Set(result.rows.map((row) => row.version));
    },
    async apply(migration: Migration) {
      await client.query('BEGIN');
      try {
        const recorded = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
        if (recorded.rowCount === 0) {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        }
        await client.query('COMMIT');
        return recorded.rowCount === 0;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    },
  };
}

/**
 * The statements that open an insert transaction. The lock makes seq order equal commit order across
 * replicas: without it, a transaction could draw seq 7, then commit after another's seq 8, and a
 * subscription that resumed "after seq 8" in between would never see 7.
 */
async function beginInsertSql(pool: pg.Pool, logger: Logger): Promise<string> {
  const lock = `SELECT pg_advisory_xact_lock(${INSERT_LOCK_KEY})`;
  const { rows } = await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
  if (rows[0]?.synchronous_commit !== 'off') return `BEGIN; ${lock}`;
  // With it off, COMMIT returns before the WAL is flushed: a 00 could be lost in a crash.
  logger.warn('synchronous_commit is off on this database; the store turns it on for its inserts');
  return `BEGIN; SET LOCAL synchronous_commit = on; ${lock}`;
}

/** Writes one batch (distinct settlementIds) under the insert lock; commits only when it stored something. */
async function writeBatch(pool: pg.Pool, beginSql: string, notifications: NewCollectionNotification[]) {
  const rows = notifications.map(toInsertParams);
  const columns = INSERT_COLUMNS.map((_, index) => rows.map((row) => row[index]));
  const client = await pool.connect();
  let result: pg.QueryResult<{ seq: string; settlement_id: string }>;
  try {
    await client.query(beginSql);
    // Named: each connection parses and plans the statement once.
    result = await client.query<{ seq: string; settlement_id: string }>({ name: 'notifications-insert', text: QUERIES.insert, values: columns });
    // All duplicates wrote nothing worth keeping: rolling back spares a WAL flush per bank retry.
    await client.query(result.rows.length > 0 ? 'COMMIT' : 'ROLLBACK');
  } catch (error) {
    // Discarding the connection ends its session: the server rolls back and frees the lock, even
    // when the failure was a time-out that left a statement running.
    client.release(error instanceof Error ? error : true);
    throw error;
  }
  client.release();
  const seqs = new Map(result.rows.map((row) => [row.settlement_id, row.seq]));
  return notifications.map((notification) => {
    const seq = seqs.get(notification.settlementId);
    return seq === undefined ? null : insertedRecord(notification, seq);
  });
}

function storeOver(pool: pg.Pool, beginSql: string, options: BatchOptions): NotificationStore {
  let closing: Promise<void> | undefined;
  const batcher = createInsertBatcher((notifications) => writeBatch(pool, beginSql, notifications), options);
  const select = async (name: Exclude<keyof typeof QUERIES, 'insert'>, values: unknown[]) => {
    if (closing) throw new Error('The postgres store is closed');
    // Named, as the insert: planned once per connection.
    const result = await pool.query<NotificationRow>({ name: `notifications-${name}`, text: QUERIES[name], values });
    return result.rows.map(toRecord);
  };
  return {
    kind: 'postgres',
    async insert(notification) {
      if (closing) throw new Error('The postgres store is closed');
      return batcher.insert(notification);
    },
    async getMany(settlementIds) {
      if (settlementIds.length === 0) return [];
      return inRequestedOrder(settlementIds, await select('getMany', [settlementIds]));
    },
    async listNewestFirst({ accountNumber, beforeSeq, limit, from, to }) {
      const before = upperSeqBound(beforeSeq);
      if (from !== undefined || to !== undefined) {
        const page = rangedPage({ accountNumber, from, to, before, limit: checkLimit(limit) });
        return select(page.name, [...page.values]);
      }
      return accountNumber === undefined
        ? select('newest', [before, checkLimit(limit)])
        : select('newestOfAccount', [accountNumber, before, checkLimit(limit)]);
    },
    async listAfter({ accountNumber, afterSeq, limit }) {
      return accountNumber === undefined
        ? select('after', [afterSeq, checkLimit(limit)])
        : select('afterOfAccount', [accountNumber, afterSeq, checkLimit(limit)]);
    },
    async summarize(query) {
      if (closing) throw new Error('The postgres store is closed');
      return summarize(pool, query);
    },
    async size() {
      if (closing) throw new Error('The postgres store is closed');
      return measureSize(pool);
    },
    async ping() {
      if (closing) throw new Error('The postgres store is closed');
      await pool.query('SELECT 1');
    },
    close() {
      // Inserts already queued are written and answered first: a SIGTERM drain loses none.
      closing ??= batcher.drain().then(() => pool.end());
      return closing;
    },
  };
}

/**
 * The table's size from the catalog, never a count(*): its files with indexes and TOAST, and rows
 * estimated as the planner does, the tuples per page of the last VACUUM or ANALYZE times the pages
 * the table has now. Before the first of those (a young table), the statistics' live-tuple count.
 */
const SIZE_SQL = `SELECT pg_total_relation_size(c.oid)::bigint AS bytes,
    (CASE WHEN c.relpages > 0 AND c.reltuples >= 0
      THEN c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::bigint)
      ELSE pg_stat_get_live_tuples(c.oid) END)::bigint AS rows
  FROM pg_class c WHERE c.oid = 'collection_notifications'::regclass`;

async function measureSize(pool: pg.Pool): Promise<StoreSize> {
  const { rows } = await pool.query<{ bytes: string; rows: string }>({ name: 'notifications-size', text: SIZE_SQL });
  return { bytes: Number(rows[0]?.bytes ?? 0), approximateRows: Number(rows[0]?.rows ?? 0) };
}
