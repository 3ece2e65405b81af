import pg from 'pg';
import { START_OF_LOG, type LogPosition, type NewCollectionNotification } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import { createInsertBatcher, type BatchOptions, type WriteBatch } from './batch.ts';
import { loadMigrations, runMigrations, type Migration, type MigrationTarget } from './migrations.ts';
import {
  INSERT_COLUMNS,
  checkLimit,
  inRequestedOrder,
  insertedRecord,
  selectList,
  toInsertParams,
  toPosition,
  toRecord,
  type NotificationRow,
} from './notification-row.ts';
import { summarize } from './postgres-summary.ts';
import type { NotificationStore, StoreSize } from './types.ts';

const POOL_SETTINGS = {
  // Inserts go one batch at a time, one statement each; the other connections serve reads.
  max: 10,
  // Opening a connection, and waiting for a free one, fails after this rather than stalling a webhook.
  connectionTimeoutMillis: 5_000,
  idleTimeoutMillis: 30_000,
  // A stuck database (or a lock held too long) gives an error (webhook 03, bank retries), not a hang.
  // It also bounds how long one of our own inserts can hold the log's settled position back.
  statement_timeout: 5_000,
  // Client-side backstop for a server or network that stops answering altogether.
  query_timeout: 10_000,
  // A session of ours left inside a transaction (the migration's) must not hold the log back.
  idle_in_transaction_session_timeout: 10_000,
  keepAlive: true,
  application_name: 'bank-subgraph',
} satisfies pg.PoolConfig;

// Migrations may rewrite tables; they run once, at start, on a connection of their own.
const MIGRATION_TIMEOUT_MS = 120_000;

// Fixed application key for pg_advisory_lock (one namespace per database).
const MIGRATION_LOCK_KEY = 7_314_001;

/**
 * The settled part of the log: rows whose writing transaction is older than the oldest one still
 * running when the statement's snapshot was taken. Why reading it in (txid, seq) order misses
 * nothing and repeats nothing, although replicas insert without a lock and commit in any order:
 *
 * 1. Every transaction with an id below the snapshot's xmin has ended; those that committed are
 *    all visible to that snapshot, and every transaction yet to write gets a larger id. So the rows
 *    with txid < xmin are a final set: none can be added to it later.
 * 2. A follower at position P has handed out exactly the rows at or below P, and every one of them
 *    is settled. A read returns the rows above P with txid < xmin, in (txid, seq) order, the first n.
 *    Each row at or below the last one returned, P', has txid <= P'.txid < xmin, so by (1) it is
 *    final and was either at or below P or in this read. So again exactly the rows at or below P'
 *    have been handed out, and all are final: no later commit lands below P' (no skip), and the next
 *    read starts above it (no repeat). A row still unsettled is above P' and is read once it settles.
 *
 * Ordering by seq alone, with the same `txid < xmin` filter, is not enough: a batch of two rows
 * in transaction A (txid 100) draws seqs 5 and 7 while transaction B (txid 101) draws seq 6. Should
 * A commit while B runs, a reader sees 5 and 7 (txid 100 < xmin 101) and moves past 7; when B then
 * commits, its 6 lies below a position already read and is never handed out. Ordered by txid
 * first, B's (101, 6) comes after A's (100, 7).
 *
 * A transaction anywhere on the server that holds an id (has written something) and stays open
 * keeps xmin, and so live delivery, back until it ends; reads are never wrong, only later.
 */
const SETTLED = 'txid < pg_snapshot_xmin(pg_current_snapshot())';
// Above every xid8: the "before" of a first page.
const AFTER_EVERY_TXID = '18446744073709551615';

const FROM = `SELECT ${selectList('txid')} FROM collection_notifications`;

/**
 * A page of [from, to): the range's positions first (materialized, so the planner reads them through
 * the time index, which carries them), then the page's rows. It costs what the range holds, as a
 * summary of it does; left to itself, with a LIMIT, the planner would walk the log from the newest
 * and skip every row after the range.
 */
function inRange(account: string) {
  return `WITH in_range AS MATERIALIZED (
      SELECT txid, seq FROM collection_notifications
      WHERE ${account}event_time >= $1 AND event_time < $2 AND (txid, seq) < ($3::xid8, $4::bigint) AND ${SETTLED}
    )
    ${FROM} WHERE seq IN (SELECT seq FROM in_range ORDER BY txid DESC, seq DESC LIMIT $5) ORDER BY txid DESC, seq DESC`;
}

const QUERIES = {
  // A whole batch in one statement, its own transaction (one round trip, one commit), with one
  // text[] per column: its parameters are 17 whatever the batch's size, and one plan serves all.
  // Rows already stored are dropped before the insert looks at them: a row that reaches it gets
  // its column defaults, and evaluating them (txid's pg_current_xact_id(), or seq's nextval now
  // and then) gives the transaction an id, and so a commit record and a WAL flush. A batch of
  // bank retries only (all 01) thus costs no flush. The check is a scalar subquery, one probe of
  // the unique index per delivery: NOT EXISTS would become an anti-join, which a plan made while
  // the table looked small (before its first ANALYZE) hashes by reading the whole table, per batch.
  // ON CONFLICT still settles races with other replicas, whose rows are not visible yet. The
  // statement's snapshot xmin comes back too: every transaction below it had ended, so the log is
  // settled up to there (see SETTLED).
  insert: `INSERT INTO collection_notifications (${INSERT_COLUMNS.join(', ')})
    SELECT ${INSERT_COLUMNS.map((column) => `u.${column}`).join(', ')}
    FROM unnest(${INSERT_COLUMNS.map((_, index) => `$${index + 1}::text[]`).join(', ')}) AS u(${INSERT_COLUMNS.join(', ')})
    WHERE (SELECT true FROM collection_notifications c WHERE c.settlement_id = u.settlement_id) IS NULL
    ON CONFLICT (settlement_id) DO NOTHING
    RETURNING txid, seq, settlement_id, pg_snapshot_xmin(pg_current_snapshot()) AS horizon`,
  getMany: `${FROM} WHERE settlement_id = ANY($1::text[])`,
  newest: `${FROM} WHERE (txid, seq) < ($1::xid8, $2::bigint) AND ${SETTLED} ORDER BY txid DESC, seq DESC LIMIT $3`,
  newestOfAccount: `${FROM} WHERE account_number = $1 AND (txid, seq) < ($2::xid8, $3::bigint) AND ${SETTLED}
    ORDER BY txid DESC, seq DESC LIMIT $4`,
  after: `${FROM} WHERE (txid, seq) > ($1::xid8, $2::bigint) AND ${SETTLED} ORDER BY txid, seq LIMIT $3`,
  afterOfAccount: `${FROM} WHERE account_number = $1 AND (txid, seq) > ($2::xid8, $3::bigint) AND ${SETTLED}
    ORDER BY txid, seq LIMIT $4`,
  settledHead: `SELECT txid, seq FROM collection_notifications WHERE ${SETTLED} ORDER BY txid DESC, seq DESC LIMIT 1`,
  positionOfSeq: 'SELECT txid, seq FROM collection_notifications WHERE seq = $1',
  // Pages of a time range (collectionNotifications' from/to), in the same order over the same settled log.
  newestInRange: inRange(''),
  newestOfAccountInRange: inRange('account_number = $6 AND '),
  // Everything since `from`: the planner walks the log newest first, or the time index when `from` is recent.
  newestSince: `${FROM} WHERE event_time >= $1 AND (txid, seq) < ($2::xid8, $3::bigint) AND ${SETTLED}
    ORDER BY txid DESC, seq DESC LIMIT $4`,
  newestOfAccountSince: `${FROM} WHERE account_number = $5 AND event_time >= $1 AND (txid, seq) < ($2::xid8, $3::bigint) AND ${SETTLED}
    ORDER BY txid DESC, seq DESC LIMIT $4`,
};
type QueryName = keyof typeof QUERIES;

/**
 * Connects to PostgreSQL at `url`, migrates the schema, and returns the store over a pool. Inserts
 * are group-committed: one batch at a time, each one statement in its own transaction (one round
 * trip); while it is written, the next gathers.
 */
export async function createPostgresStore(url: string, options: BatchOptions & { logger: Logger }): Promise<NotificationStore> {
  const { logger } = options;
  const synchronousCommit = await migrate(url, logger);
  if (synchronousCommit === 'off') {
    // With it off, a commit returns before the WAL is flushed: a 00 could be lost in a crash.
    logger.warn('synchronous_commit is off on this database; the store turns it on for its own sessions');
  }
  const pool = new pg.Pool({
    connectionString: url,
    ...POOL_SETTINGS,
    // Per session, not per batch: a batch is one statement, with no transaction to SET LOCAL in.
    // A connection that cannot set it is never used (the pool hands out its error instead).
    onConnect: async (client) => void (await client.query('SET synchronous_commit = on')),
  });
  // Without a listener, an idle connection dropped by the server would crash the process.
  pool.on('error', (error) => logger.warn({ err: error }, 'an idle PostgreSQL connection failed; the pool replaces it'));
  return storeOver(pool, options);
}

/** Applies the migrations not yet applied; answers the database's own `synchronous_commit`. */
async function migrate(url: string, logger: Logger): Promise<string | undefined> {
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
    const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    return rows[0]?.synchronous_commit;
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

/** Writes one batch (distinct settlementIds) as one statement; answers each one's record, or null when already stored. */
async function writeBatch(pool: pg.Pool, notifications: NewCollectionNotification[]): ReturnType<WriteBatch> {
  // Named: each connection parses and plans the statement once.
  const { rows } = await pool.query<{ txid: string; seq: string; settlement_id: string; horizon: string }>({
    name: 'notifications-insert',
    text: QUERIES.insert,
    values: insertColumns(notifications),
  });
  if (rows.length === 0) return { records: notifications.map(() => null), settled: START_OF_LOG };
  // One statement, one transaction, one snapshot: every row has the same txid and horizon.
  const { txid, horizon } = rows[0]!;
  const seqs = new Map(rows.map((row) => [row.settlement_id, row.seq]));
  const records = notifications.map((notification) => {
    const seq = seqs.get(notification.settlementId);
    return seq === undefined ? null : insertedRecord(notification, toPosition(txid, seq));
  });
  // No row is at seq 0: (horizon, 0) lies after every row below the horizon and before the rest.
  return { records, settled: toPosition(horizon, 0) };
}

/** The insert's parameters: one array per column, in INSERT_COLUMNS order. */
function insertColumns(notifications: readonly NewCollectionNotification[]): (string | null)[][] {
  const rows = notifications.map(toInsertParams);
  return INSERT_COLUMNS.map((_, index) => rows.map((row) => row[index]!));
}

/** The query name and values of a time-ranged page of listNewestFirst (`from`, `to` or both given). */
function rangedPage(page: { accountNumber: string | undefined; from: Date | undefined; to: Date | undefined; bound: unknown[]; limit: number }) {
  const account = page.accountNumber === undefined ? [] : [page.accountNumber];
  const from = page.from?.toISOString() ?? '-infinity';
  if (page.to === undefined) {
    const name = page.accountNumber === undefined ? 'newestSince' : 'newestOfAccountSince';
    return { name, values: [from, ...page.bound, page.limit, ...account] } as const;
  }
  const name = page.accountNumber === undefined ? 'newestInRange' : 'newestOfAccountInRange';
  return { name, values: [from, page.to.toISOString(), ...page.bound, page.limit, ...account] } as const;
}

/** `position` as the (txid, seq) parameters of a query. */
const positionParams = (position: LogPosition) => [String(position.txid), position.seq];

function storeOver(pool: pg.Pool, options: BatchOptions): NotificationStore {
  let closing: Promise<void> | undefined;
  const batcher = createInsertBatcher((notifications) => writeBatch(pool, notifications), options);
  const query = async <Row extends pg.QueryResultRow>(name: Exclude<QueryName, 'insert'>, values: unknown[]) => {
    if (closing) throw new Error('The postgres store is closed');
    // Named, as the insert: planned once per connection.
    return (await pool.query<Row>({ name: `notifications-${name}`, text: QUERIES[name], values })).rows;
  };
  const select = async (name: Exclude<QueryName, 'insert'>, values: unknown[]) => (await query<NotificationRow>(name, values)).map(toRecord);
  const position = async (name: 'settledHead' | 'positionOfSeq', values: unknown[]) => {
    const [row] = await query<{ txid: string; seq: string }>(name, values);
    return row && toPosition(row.txid, row.seq);
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
    async listNewestFirst({ accountNumber, before, limit, from, to }) {
      const bound = before ? positionParams(before) : [AFTER_EVERY_TXID, 0];
      if (from !== undefined || to !== undefined) {
        const page = rangedPage({ accountNumber, from, to, bound, limit: checkLimit(limit) });
        return select(page.name, [...page.values]);
      }
      return accountNumber === undefined
        ? select('newest', [...bound, checkLimit(limit)])
        : select('newestOfAccount', [accountNumber, ...bound, checkLimit(limit)]);
    },
    async listAfter({ accountNumber, after, limit }) {
      return accountNumber === undefined
        ? select('after', [...positionParams(after), checkLimit(limit)])
        : select('afterOfAccount', [accountNumber, ...positionParams(after), checkLimit(limit)]);
    },
    async settledHead() {
      return (await position('settledHead', [])) ?? START_OF_LOG;
    },
    async positionOfSeq(seq) {
      return position('positionOfSeq', [seq]);
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
