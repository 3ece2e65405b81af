// The insert-cost mode (`npm run bench -- --insert-cost`): what storing a notification costs the
// machine, ours against the floor's row, with no HTTP and no load process in the way. The webhook's
// rate on a machine whose cores are all busy follows the CPU each acknowledgement takes, and the
// store's part of it is the part that differs most between ours and the floor (docs/benchmarks.md).
//
// Each writer stores the bench's own notification bodies (parsed as the webhook parses them, before
// the clock starts) in batches of BATCH, one batch at a time, taking turns with the others round by
// round. Measured per stored row: this process's CPU (node:sqlite writes on the calling thread; on
// PostgreSQL it is the driver's side), and on PostgreSQL the database server's CPU, read from its
// backends' /proc/<pid>/schedstat when the server runs on this machine.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { parseNotification } from '../../src/collection/notification.ts';
import type { NewCollectionNotification } from '../../src/domain/index.ts';
import { createLogger } from '../../src/logger.ts';
import { createNotificationStore } from '../../src/store/index.ts';
import { createNotificationBodies } from './bank.ts';
import { POSTGRES_FLOOR, SQLITE_FLOOR } from './floors/floor-tables.ts';
import { isolatedSchema, type IsolatedSchema } from './replicas.ts';
import { table } from './report.ts';

/** Rows per transaction: about what the webhook's batches hold under the bench's 100 connections. */
export const BATCH = 25;

/** The two indexes of time ranges and summaries (collectionNotifications from/to, collectionSummary), same names on both stores. */
const SUMMARY_INDEXES = ['collection_notifications_account_time', 'collection_notifications_time'];
/** Every index but the primary key's and settlementId's: those of the log, of each account's pages, and the summaries'. */
const FEATURE_INDEXES = {
  sqlite: [...SUMMARY_INDEXES, 'collection_notifications_account_seq', 'collection_notifications_beyond_kobo'],
  postgres: [...SUMMARY_INDEXES, 'collection_notifications_log', 'collection_notifications_account_log'],
};

export interface InsertCostOptions {
  /** Measured rounds per writer, taking turns; the median is reported. One unmeasured round comes first. */
  rounds: number;
  rowsPerRound: number;
  /** Where the SQLite files go. */
  parentDir: string;
  sqlite: boolean;
  /** The PostgreSQL writers too, each in a schema of its own. */
  databaseUrl: string | undefined;
  /** A line on each round as it starts. */
  onProgress?: ((line: string) => void) | undefined;
}

export interface InsertCostRow {
  store: 'SQLite' | 'PostgreSQL';
  writer: string;
  /** The indexes its table had, read back from the database once it was written. */
  indexes: number;
  /** Microseconds of this process's CPU per stored row (median round). */
  processUs: number;
  /** Microseconds of the database server's CPU per stored row; undefined on SQLite or when the server is not on this machine. */
  databaseUs: number | undefined;
  /** Both together against the floor's. */
  ratio: number;
}

/** A store being written: one batch at a time, each committed before it resolves. */
interface Writer {
  name: string;
  write(batch: readonly NewCollectionNotification[]): Promise<void>;
  /** Nanoseconds of CPU its database server has used so far, or undefined when that cannot be read. */
  databaseCpuNs(): Promise<number | undefined>;
  /** How many indexes its table has. */
  indexes(): Promise<number>;
  close(): Promise<void>;
}

export async function measureInsertCost(options: InsertCostOptions): Promise<InsertCostRow[]> {
  const rows: InsertCostRow[] = [];
  if (options.sqlite) {
    const dir = await mkdtemp(join(options.parentDir, 'bench-insert-cost-'));
    try {
      rows.push(...(await measureWriters('SQLite', await sqliteWriters(dir), options)));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  if (options.databaseUrl) {
    // One for each of ours, and the floor's.
    const schemas = await Promise.all([...OURS, FLOOR].map(() => isolatedSchema(options.databaseUrl!)));
    try {
      rows.push(...(await measureWriters('PostgreSQL', await postgresWriters(options.databaseUrl, schemas), options)));
    } finally {
      await Promise.all(schemas.map((schema) => schema.drop()));
    }
  }
  return rows;
}

async function measureWriters(store: InsertCostRow['store'], writers: Writer[], options: InsertCostOptions): Promise<InsertCostRow[]> {
  const next = notificationSource();
  const samples = new Map(writers.map((writer) => [writer, { processUs: [] as number[], databaseUs: [] as (number | undefined)[] }]));
  const indexes = new Map<Writer, number>();
  try {
    for (let round = 0; round <= options.rounds; round += 1) {
      options.onProgress?.(`insert cost, ${store}: ${round === 0 ? 'warm-up round' : `round ${round} of ${options.rounds}`} (${options.rowsPerRound} rows per writer)…`);
      // Turns alternate, so a slow moment of the machine lands on every writer alike.
      for (const writer of round % 2 === 0 ? writers : writers.toReversed()) {
        const batches = Array.from({ length: Math.ceil(options.rowsPerRound / BATCH) }, () => Array.from({ length: BATCH }, next));
        const stored = batches.length * BATCH;
        const database = await writer.databaseCpuNs();
        const cpu = process.cpuUsage();
        for (const batch of batches) await writer.write(batch);
        const used = process.cpuUsage(cpu);
        const databaseAfter = await writer.databaseCpuNs();
        if (round === 0) continue;
        const sample = samples.get(writer)!;
        sample.processUs.push((used.user + used.system) / stored);
        sample.databaseUs.push(database === undefined || databaseAfter === undefined ? undefined : (databaseAfter - database) / 1000 / stored);
      }
    }
    for (const writer of writers) indexes.set(writer, await writer.indexes());
  } finally {
    await Promise.all(writers.map((writer) => writer.close()));
  }
  const measured = writers.map((writer) => {
    const sample = samples.get(writer)!;
    const databaseUs = sample.databaseUs.every((us) => us !== undefined) ? median(sample.databaseUs as number[]) : undefined;
    return { store, writer: writer.name, indexes: indexes.get(writer)!, processUs: median(sample.processUs), databaseUs };
  });
  const floor = measured.at(-1)!;
  const total = (row: { processUs: number; databaseUs: number | undefined }) => row.processUs + (row.databaseUs ?? 0);
  return measured.map((row) => ({ ...row, ratio: total(row) / total(floor) }));
}

/** Our store with its indexes, then with fewer: what each group of them costs a row. */
const OURS = [
  { name: 'ours: every column, every index', drop: { sqlite: [], postgres: [] } },
  { name: 'ours without the time-range and summary indexes', drop: { sqlite: SUMMARY_INDEXES, postgres: SUMMARY_INDEXES } },
  { name: "ours with settlementId's index alone", drop: FEATURE_INDEXES },
];
const FLOOR = "the floor's row (settlement_id, session_id, body)";

/** Ours as OURS lists, and the floor's (last: the others are compared with it). */
async function sqliteWriters(dir: string): Promise<Writer[]> {
  const ours: Writer[] = [];
  for (const [i, { name, drop }] of OURS.entries()) ours.push(await sqliteStoreWriter(name, join(dir, `ours-${i}.db`), drop.sqlite));
  const floor = new DatabaseSync(join(dir, 'floor.db'));
  // As floors/receiver.ts opens it.
  floor.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
  floor.exec(SQLITE_FLOOR.table);
  const insert = floor.prepare(SQLITE_FLOOR.insert);
  const floorWriter: Writer = {
    name: FLOOR,
    async write(batch) {
      floor.exec('BEGIN');
      for (const n of batch) {
        if (insert.run(n.settlementId, n.sessionId, n.rawBody).changes !== 1) throw new Error(`the floor did not store ${n.settlementId}`);
      }
      floor.exec('COMMIT');
    },
    databaseCpuNs: async () => undefined,
    indexes: async () => sqliteIndexes(floor, 'notifications'),
    close: async () => floor.close(),
  };
  return [...ours, floorWriter];
}

async function sqliteStoreWriter(name: string, path: string, dropIndexes: readonly string[]): Promise<Writer> {
  const indexes = async () => {
    const database = new DatabaseSync(path, { readOnly: true });
    try {
      return sqliteIndexes(database, 'collection_notifications');
    } finally {
      database.close();
    }
  };
  const writer = await storeWriter(name, `sqlite:${path}`, { databaseCpuNs: async () => undefined, indexes });
  if (dropIndexes.length > 0) {
    // A second connection changes the schema; the store's prepared insert is prepared again by SQLite.
    const database = new DatabaseSync(path);
    for (const index of dropIndexes) database.exec(`DROP INDEX ${index}`);
    database.close();
  }
  return writer;
}

function sqliteIndexes(database: DatabaseSync, table: string): number {
  return Number(database.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?").get(table)!.n);
}

/** The same writers, each in its schema; the database's CPU is counted by each writer's own application_name. */
async function postgresWriters(databaseUrl: string, schemas: IsolatedSchema[]): Promise<Writer[]> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  const named = (url: string, application: string) => {
    const withName = new URL(url);
    withName.searchParams.set('application_name', application);
    return withName.toString();
  };
  const cpuOf = (application: string) => () => backendsCpuNs(admin, application);
  const indexesOf = (schema: string, table: string) => async () => {
    const { rows } = await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [schema, table]);
    return Number(rows[0]!.n);
  };
  const ours: Writer[] = [];
  for (const [i, { name, drop }] of OURS.entries()) {
    const application = `bench-insert-cost-ours-${i}`;
    const schema = schemas[i]!;
    ours.push(await storeWriter(name, named(schema.url, application), { databaseCpuNs: cpuOf(application), indexes: indexesOf(schema.name, 'collection_notifications') }));
    for (const index of drop.postgres) await admin.query(`DROP INDEX ${schema.name}.${index}`);
  }

  // As floors/pg-receiver.ts writes: one statement per batch, synchronous_commit on.
  const floor = new pg.Client({ connectionString: named(schemas.at(-1)!.url, 'bench-insert-cost-floor') });
  await floor.connect();
  await floor.query('SET synchronous_commit = on');
  await floor.query(POSTGRES_FLOOR.table);
  const floorWriter: Writer = {
    name: FLOOR,
    async write(batch) {
      const values = [batch.map((n) => n.settlementId), batch.map((n) => n.sessionId), batch.map((n) => n.rawBody)];
      const { rowCount } = await floor.query({ name: 'insert', text: POSTGRES_FLOOR.insert, values });
      if (rowCount !== batch.length) throw new Error(`the floor stored ${rowCount} of ${batch.length} rows`);
    },
    databaseCpuNs: cpuOf('bench-insert-cost-floor'),
    indexes: indexesOf(schemas.at(-1)!.name, 'notifications'),
    close: async () => {
      await floor.end();
      await admin.end();
    },
  };
  return [...ours, floorWriter];
}

/** Our store at `url`, written through its own insert: a batch is what one event-loop turn gives it. */
async function storeWriter(name: string, url: string, read: Pick<Writer, 'databaseCpuNs' | 'indexes'>): Promise<Writer> {
  const store = await createNotificationStore(url, { logger: createLogger('silent') });
  return {
    name,
    async write(batch) {
      const results = await Promise.all(batch.map((notification) => store.insert(notification)));
      const duplicate = results.findIndex((result) => result.status !== 'inserted');
      if (duplicate >= 0) throw new Error(`${name}: ${batch[duplicate]!.settlementId} was not stored`);
    },
    ...read,
    close: () => store.close(),
  };
}

/**
 * The CPU the database server's backends of `application` have used (their sessions stay open while
 * a writer runs). Undefined when their /proc entries cannot be read: the server is on another machine.
 */
async function backendsCpuNs(admin: pg.Client, application: string): Promise<number | undefined> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [application]);
  let total = 0;
  for (const { pid } of rows) {
    try {
      total += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      return undefined;
    }
  }
  return rows.length > 0 ? total : undefined;
}

/** Notifications as the webhook stores them, from the bodies the bench's load process posts. */
function notificationSource(): () => NewCollectionNotification {
  const nextBody = createNotificationBodies();
  return () => {
    const parsed = parseNotification(nextBody().body, { timezone: 'Africa/Lagos', receivedAt: new Date() });
    if (!parsed.ok) throw new Error(`the bench's notification body was refused: ${parsed.reason}`);
    return parsed.notification;
  };
}

function median(values: readonly number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const us = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(1));

export function insertCostTable(rows: readonly InsertCostRow[]): string {
  const header = ['store', 'indexes', 'this process µs/row', 'database µs/row', 'CPU per row against the floor', 'writer'];
  return table(
    header,
    rows.map((row) => [row.store, String(row.indexes), us(row.processUs), us(row.databaseUs), `${row.ratio.toFixed(2)}×`, row.writer]),
  );
}

export const INSERT_COST_LEGEND = `\
Each writer stores the bench's notification bodies in transactions of ${BATCH} rows, one at a time, with
  no HTTP; the writers take turns, round by round, and each figure is the median round's.
this process: CPU of the bench process per stored row (node:sqlite writes on the calling thread, so on
  SQLite this is the whole insert and commit; on PostgreSQL, the driver's side). database: CPU of the
  PostgreSQL server's backends per stored row ('-' when the server is not on this machine).
indexes: those of the writer's table, its primary key's and settlementId's unique one among them.
CPU per row against the floor: both together, against the floor's row written the same way. The
  webhook's acknowledgements per second on a machine with every core busy follow the CPU each one
  takes, and this is the part of it that lies in the stored row and its indexes.`;
