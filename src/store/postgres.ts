import pg from 'pg';
import { START_OF_LOG, type NewCollectionNotification } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { BatchOptions } from './batch.ts';
import { createStore, type ConfirmedRow, type StoreBackend, type WrittenBatch } from './core.ts';
import { toInsertParams, toPosition, type InsertValue, type NotificationRow } from './notification-row.ts';
import { withDeadline, type RunQuery } from './postgres-deadline.ts';
import { migrate } from './postgres-migrate.ts';
import { AFTER_EVERY_TXID, filteredPage, forAccounts, QUERIES, positionParams, rangeParams, type QueryName } from './postgres-queries.ts';
import { createPostgresConfirmations } from './postgres-confirmations.ts';
import { createPostgresQuarantine } from './postgres-quarantine.ts';
import { daySums } from './postgres-summary.ts';
import type { CollectionStore } from './types.ts';

/**
 * Batches written at once, each one statement on a connection of its own: commits in flight together
 * share WAL flushes, so the next batch need not wait for the last one's (docs/benchmarks.md, "What shapes the code"). Any
 * order of commits is safe: the log is read only where it is settled.
 */
const BATCHES_IN_FLIGHT = 4;

/**
 * Each kind of work has connections of its own: the webhook's writes (one per batch in flight), the
 * log follower's reads (live delivery), everything a GraphQL caller asks for, and the quarantine's
 * writes (one at a time), and the confirmation queue's outcomes and its leases. A storm of heavy reads, or of refused deliveries, then waits for its own
 * connections and never takes one a write of money needs; and with few of them, it queues here
 * rather than in the database, where it would take the CPU the writes need.
 */
const POOL_SIZES = { write: BATCHES_IN_FLIGHT, log: 2, read: 3, quarantine: 1, confirmation: 1, lease: 1 } as const;
type PoolRole = keyof typeof POOL_SIZES;

/**
 * The confirmation queue's claims and deferrals (`lease`) commit without waiting for the WAL flush:
 * they only move a due time, and one lost in a crash of the database makes a row due sooner. Every
 * other session waits for it, outcomes included, as a 00 does.
 */
const SYNCHRONOUS_COMMIT: Record<PoolRole, 'on' | 'off'> = {
  write: 'on',
  log: 'on',
  read: 'on',
  quarantine: 'on',
  confirmation: 'on',
  lease: 'off',
};

const POOL_SETTINGS = {
  // Opening a connection, and waiting for a free one, fails after this rather than stalling a webhook.
  connectionTimeoutMillis: 5_000,
  idleTimeoutMillis: 30_000,
  // A stuck database (or a lock held too long) gives an error (webhook 03, bank retries), not a hang.
  // It also bounds how long one of our own inserts can hold the log's settled position back.
  statement_timeout: 5_000,
  // A session of ours left inside a transaction (the migration's) must not hold the log back.
  idle_in_transaction_session_timeout: 10_000,
  keepAlive: true,
  application_name: 'bank-subgraph',
} satisfies pg.PoolConfig;

/** How long a statement may go unanswered before it fails and its connection is dropped (postgres-deadline.ts). */
const ANSWER_TIMEOUT_MS = 10_000;

/** What the PostgreSQL store takes: its logger, and what to tell about each batch. */
export interface PostgresStoreOptions extends BatchOptions {
  logger: Logger;
}

/**
 * Connects to PostgreSQL at `url`, migrates the schema, and returns the store over a pool. Inserts
 * are group-committed: each batch one statement in its own transaction (one round trip), up to
 * BATCHES_IN_FLIGHT at once; while that many are written, the next gathers.
 */
export async function createPostgresStore(url: string, options: PostgresStoreOptions): Promise<CollectionStore> {
  const { logger } = options;
  const { identity, synchronousCommit } = await migrate(url, POOL_SETTINGS, logger);
  if (synchronousCommit === 'off') {
    // With it off, a commit returns before the WAL is flushed: a 00 could be lost in a crash.
    logger.warn('synchronous_commit is off on this database; the store turns it on for its own sessions');
  }
  const pools = Object.fromEntries(
    (Object.keys(POOL_SIZES) as PoolRole[]).map((role) => {
      const pool = new pg.Pool({
        connectionString: url,
        ...POOL_SETTINGS,
        max: POOL_SIZES[role],
        application_name: `${POOL_SETTINGS.application_name}-${role}`,
        // Per session, not per batch: a batch is one statement, with no transaction to SET LOCAL in.
        // A connection that cannot set it is never used (the pool hands out its error instead).
        // pg-pool awaits onConnect (its index.js); @types/pg still declares it as returning void.
        // oxlint-disable-next-line typescript/no-misused-promises
        onConnect: async (client) => void (await client.query(`SET synchronous_commit = ${SYNCHRONOUS_COMMIT[role]}`)),
      });
      // Without a listener, an idle connection dropped by the server would crash the process.
      pool.on('error', (error) => logger.warn({ err: error, pool: role }, 'an idle PostgreSQL connection failed; the pool replaces it'));
      return [role, pool];
    }),
  ) as Record<PoolRole, pg.Pool>;
  const runners = {
    write: withDeadline(pools.write, ANSWER_TIMEOUT_MS),
    log: withDeadline(pools.log, ANSWER_TIMEOUT_MS),
    read: withDeadline(pools.read, ANSWER_TIMEOUT_MS),
    quarantine: withDeadline(pools.quarantine, ANSWER_TIMEOUT_MS),
    confirmation: withDeadline(pools.confirmation, ANSWER_TIMEOUT_MS),
    lease: withDeadline(pools.lease, ANSWER_TIMEOUT_MS),
  };
  const close = async () => void (await Promise.all(Object.values(pools).map((pool) => pool.end())));
  return createStore(backendOver(identity, runners, close), options);
}

/** Writes one batch (distinct settlementIds) as one statement; answers each one's position, or null when already stored. */
async function insertBatch(run: RunQuery, notifications: NewCollectionNotification[]): Promise<WrittenBatch> {
  // Named: each connection parses and plans the statement once.
  const { rows } = await run<{ txid: string; seq: string; settlement_id: string; horizon: string }>({
    name: 'notifications-insert',
    text: QUERIES.insert,
    values: [insertRows(notifications)],
  });
  if (rows.length === 0) return { positions: notifications.map(() => null), settled: START_OF_LOG };
  // One statement, one transaction, one snapshot: every row has the same txid and horizon.
  const { txid, horizon } = rows[0]!;
  const seqs = new Map(rows.map((row) => [row.settlement_id, row.seq]));
  const positions = notifications.map((notification) => {
    const seq = seqs.get(notification.settlementId);
    return seq === undefined ? null : toPosition(txid, seq);
  });
  // No row is at seq 0: (horizon, 0) lies after every row below the horizon and before the rest.
  return { positions, settled: toPosition(horizon, 0) };
}

/**
 * The insert's one parameter: the batch as a JSON array of rows, each its INSERT_COLUMNS values in
 * order. A lone surrogate (a JSON body may escape one into a field) becomes U+FFFD, as UTF-8
 * encoding writes it everywhere else; PostgreSQL would refuse its \u escape, and the whole batch.
 */
function insertRows(notifications: readonly NewCollectionNotification[]): string {
  // In settlementId order: batches written at once (here or on other replicas) then take the unique
  // index's entries in one order, so two holding the same ids wait for each other and never deadlock.
  const ordered = notifications.toSorted((a, b) => (a.settlementId < b.settlementId ? -1 : a.settlementId > b.settlementId ? 1 : 0));
  return JSON.stringify(ordered.map((notification) => toInsertParams(notification).map(jsonValue)));
}

/** A column's value as the JSON row carries it: text made well-formed, bytes in base64 (the insert decodes them). */
const jsonValue = (value: InsertValue) =>
  value === null || typeof value === 'number'
    ? value
    : typeof value !== 'string'
      ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')
      : value.isWellFormed()
        ? value
        : value.toWellFormed();

/**
 * Whether PostgreSQL answered the statement with an error of its own (a SQLSTATE), other than the
 * classes that mean it could not run anything now: connection exceptions (08), insufficient
 * resources such as a full disk (53), and shutdowns or cancellations, statement_timeout's included
 * (57). Without a SQLSTATE (a dropped connection, our answer deadline) nothing was refused.
 */
function refusedStatement(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|53|57)/.test(code);
}

/**
 * Whether PostgreSQL refused a row for its content: a data exception (22: a value out of range or
 * not of its type), an integrity constraint (23: a CHECK, NOT NULL, a unique index), or a program
 * limit (54: an index entry too big). Not a rolled-back transaction (40: a deadlock, a serialization
 * failure), a missing table or privilege (42), a lock not granted (55), a trigger's own exception
 * (P0) or a failure to run at all: those can pass on a retry.
 */
function refusedRow(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22|23|54)[0-9A-Z]{3}$/.test(code);
}

/** The store's statements, each named (every connection parses and plans it once), each on the connections of its kind of work. */
function backendOver(identity: string, runners: Record<PoolRole, RunQuery>, close: () => Promise<void>): StoreBackend {
  const query = async <Row extends pg.QueryResultRow>(role: PoolRole, name: Exclude<QueryName, 'insert'>, values: unknown[] = []) =>
    (await runners[role]<Row>({ name: `notifications-${name}`, text: QUERIES[name], values })).rows;
  const select = (role: PoolRole, name: Exclude<QueryName, 'insert' | 'size'>, values: unknown[]) =>
    query<NotificationRow>(role, name, values);
  type HeadQuery = 'settledHead' | 'committedHead' | 'confirmedSettledHead' | 'confirmedCommittedHead';
  const position = async (name: HeadQuery, values: unknown[]) => {
    const [row] = await query<{ txid: string; seq: string }>('log', name, values);
    return row && toPosition(row.txid, row.seq);
  };
  return {
    kind: 'postgres',
    identity,
    batchesInFlight: BATCHES_IN_FLIGHT,
    insertBatch: (notifications) => insertBatch(runners.write, notifications),
    rowsOf: (settlementIds) => select('read', 'getMany', [settlementIds]),
    rowOfSession: async (sessionId) => (await select('read', 'bySession', [sessionId]))[0],
    async newestFirst({ accountNumber, accounts, before, limit, from, to, statuses }) {
      const bound = before ? positionParams(before) : [AFTER_EVERY_TXID, 0];
      const page =
        from === undefined && to === undefined && statuses === undefined
          ? { read: 'newest' as const, values: [...bound, limit] }
          : filteredPage({ from, to, statuses, bound, limit });
      const { name, values } = forAccounts(page.read, { accountNumber, accounts }, page.values);
      return select('read', name, values);
    },
    // The log follower's reads (live delivery) and subscribers' replays.
    async after({ accountNumber, accounts, after, through, limit }) {
      const { name, values } = forAccounts('after', { accountNumber, accounts }, [...rangeParams({ after, through }), limit]);
      return select('log', name, values);
    },
    settledHead: () => position('settledHead', []),
    committedHead: () => position('committedHead', []),
    confirmations: createPostgresConfirmations({ outcomes: runners.confirmation, leases: runners.lease }),
    confirmationLog: {
      async after({ accountNumber, accounts, after, through, limit }) {
        const { name, values } = forAccounts('confirmedAfter', { accountNumber, accounts }, [...rangeParams({ after, through }), limit]);
        return query<ConfirmedRow & pg.QueryResultRow>('log', name, values);
      },
      settledHead: () => position('confirmedSettledHead', []),
      committedHead: () => position('confirmedCommittedHead', []),
    },
    daySums: (days, filter, confirmed) => daySums(runners.read, days, filter, confirmed),
    async size() {
      const [row] = await query<{ bytes: string; rows: string }>('read', 'size');
      return { bytes: Number(row?.bytes ?? 0), approximateRows: Number(row?.rows ?? 0) };
    },
    // Readiness asks whether the store answers: on the log's connections, which a storm does not hold.
    ping: async () => void (await runners.log({ text: 'SELECT 1' })),
    refusedStatement,
    refusedRow,
    quarantine: createPostgresQuarantine(runners),
    close,
  };
}
