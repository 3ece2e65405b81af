/**
 * Store fixtures for every suite: fresh databases of each backend (a SQLite file, in-memory SQLite,
 * an isolated PostgreSQL schema), a way to make their commits fail, and a look at their rows. The
 * store suites open stores on them directly; app suites hand the app their STORE_URL. Everything
 * created here is removed when the test finishes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { pino } from 'pino';
import type { Logger } from '../../src/logger.ts';
import { createNotificationStore } from '../../src/store/index.ts';
import { createSqliteStore } from '../../src/store/sqlite.ts';
import type { BatchOptions } from '../../src/store/batch.ts';
import { comparePositions, START_OF_LOG, type LogPosition } from '../../src/domain/index.ts';
import type { CollectionStore, InsertResult, NotificationStore } from '../../src/store/types.ts';
import { onCleanup } from './cleanup.ts';
import { serviceUrl } from './services.ts';
import { Inbox, waitFor } from './wait.ts';

/** DATABASE_URL, or undefined to skip PostgreSQL (under CI=true its absence throws instead). */
export const databaseUrl = serviceUrl('DATABASE_URL');

/** A logger that writes nothing. */
export const silent = pino({ level: 'silent' });

/** A logger whose lines the test can read, to check what the store reported; `lines.first(…)` waits for one. */
export function capturingLogger() {
  const lines = new Inbox<string>();
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

/** A new directory, removed with everything in it when the test finishes. */
export function tempDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'bank-subgraph-test-'));
  onCleanup(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** The path of a SQLite database file not yet created, in a directory removed after the test. */
export function tempSqlitePath(): string {
  return join(tempDirectory(), 'collections.db');
}

/**
 * The STORE_URL a test app starts with unless it names one: in-memory SQLite under the sandbox
 * rules, a temporary file where the production rules refuse a memory store (a live bank, production).
 */
export function testStoreUrl(env: Record<string, string | undefined>): string {
  const closed = (env.UPSTREAM_MODE ?? 'sandbox') !== 'sandbox' || env.NODE_ENV === 'production';
  return closed ? `sqlite:${tempSqlitePath()}` : 'sqlite::memory:';
}

/** A store on a new in-memory SQLite database, closed after the test: for wrapping as an app's store. */
export async function openMemoryStore(): Promise<CollectionStore> {
  const store = await createNotificationStore('sqlite::memory:', { logger: silent });
  onCleanup(() => store.close());
  return store;
}

/** Runs one SQL statement on a SQLite file beside whatever else has it open. */
export function queryFile(path: string, sql: string): Record<string, unknown>[] {
  const database = new DatabaseSync(path, { timeout: 5_000 });
  try {
    return database.prepare(sql).all();
  } finally {
    database.close();
  }
}

/**
 * A URL of `databaseUrl`'s server whose connections use a new, empty schema, so suites running in
 * parallel never see each other's tables. The schema is dropped when the test finishes.
 */
export async function isolatedPostgresUrl(databaseUrl: string): Promise<string> {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const run = (sql: string) => queryPostgres(databaseUrl, sql);
  await run(`CREATE SCHEMA ${schema}`);
  onCleanup(() => run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** A PostgreSQL session of the test's own on `url`, ended after the test (first, so nothing waits on it). */
export async function postgresSession(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  onCleanup(() => client.end());
  return client;
}

/** The store at `url` (migrated as it opens), closed after the test. */
export async function storeAt(url: string, logger: Logger = silent): Promise<CollectionStore> {
  const store = await createNotificationStore(url, { logger });
  onCleanup(() => store.close());
  return store;
}

/** Runs SQL (several statements allowed) on its own connection; the rows of the last statement. */
async function queryPostgres(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(sql);
    return (Array.isArray(result) ? result.at(-1) : result).rows;
  } finally {
    await client.end();
  }
}

/** One fresh, empty database of a backend; it and every store opened on it go when the test ends. */
export interface TestDatabase {
  /** A new store on this database (an in-memory database backs only one). */
  open(logger?: Logger, options?: BatchOptions): Promise<CollectionStore>;
  /** Runs SQL on the database beside the store, for inspection. */
  query(sql: string): Promise<Record<string, unknown>[]>;
  /** Runs a script of several statements on the database beside the store (a migration, say). */
  exec(sql: string): Promise<void>;
  /** Makes every insert fail inside the database (as a full disk would), storing nothing. */
  breakInserts(): Promise<void>;
  /** Undoes breakInserts. */
  repairInserts(): Promise<void>;
  /** Makes the database refuse the row of this one settlementId, for a reason no check foresees. */
  refuseRow(settlementId: string): Promise<void>;
  /** Counts the stored notifications, straight from the database. */
  countRows(): Promise<number>;
  /** Makes the quarantine refuse the delivery of this one sessionId, for a reason no check foresees. */
  refuseQuarantineRow(sessionId: string): Promise<void>;
  /** Makes the quarantine refuse every write (a table gone read-only), the notifications untouched. */
  freezeQuarantine(): Promise<void>;
  /** Undoes freezeQuarantine. */
  thawQuarantine(): Promise<void>;
  /** The quarantine's rows, oldest first, the body as text, straight from the database. */
  quarantined(): Promise<QuarantinedRow[]>;
}

/** A row of the quarantine as a test reads it. */
export interface QuarantinedRow {
  kind: string;
  reason: string;
  detail: string | null;
  response_code: string;
  received_at: string;
  session_id: string | null;
  settlement_id: string | null;
  account_number: string | null;
  /** The body's bytes. */
  raw_body: Buffer;
  reviewed_at: string | null;
}

/** A database the app can reach by URL. */
export interface UrlTestDatabase extends TestDatabase {
  /** STORE_URL for the app. */
  storeUrl: string;
}

export interface StoreBackend<Database extends TestDatabase = TestDatabase> {
  name: string;
  /** False when its server is not configured (PostgreSQL without DATABASE_URL, outside CI). */
  enabled: boolean;
  /** Separate stores share the data: two replicas, or close then reopen. */
  shared: boolean;
  /** Several batches are written at once (PostgreSQL); SQLite writes one at a time, within its turn. */
  writesBatchesAtOnce: boolean;
  /** A fresh, empty database for the current test. */
  create(): Promise<Database>;
}

const TABLE = 'collection_notifications';

/** The parts of a test database every backend builds the same way from its `query`. */
function withFaultsAndCount(
  query: TestDatabase['query'],
  fault: {
    add: string;
    remove: string;
    refuse(settlementId: string): string;
    refuseQuarantine(sessionId: string): string;
    freezeQuarantine: string;
    thawQuarantine: string;
  },
) {
  return {
    breakInserts: async () => void (await query(fault.add)),
    repairInserts: async () => void (await query(fault.remove)),
    refuseRow: async (settlementId: string) => void (await query(fault.refuse(settlementId))),
    refuseQuarantineRow: async (sessionId: string) => void (await query(fault.refuseQuarantine(sessionId))),
    countRows: async () => Number((await query(`SELECT count(*) AS n FROM ${TABLE}`))[0]?.n),
    freezeQuarantine: async () => void (await query(fault.freezeQuarantine)),
    thawQuarantine: async () => void (await query(fault.thawQuarantine)),
    quarantined: async () =>
      (
        await query(
          'SELECT kind, reason, detail, response_code, received_at, session_id, settlement_id, account_number, raw_body, reviewed_at FROM collection_quarantine ORDER BY id',
        )
      ).map((row) => ({ ...row, raw_body: Buffer.from(row.raw_body as Uint8Array) }) as QuarantinedRow),
  };
}

// Test ids only: quoted as SQL literals without escaping. A failure of the database (breakInserts) is
// an error about no row (SQLite's generic error, from a bad JSON path; PostgreSQL's trigger
// exception), which a retry may pass; a refused row (refuseRow) is a constraint, which none passes.
const SQLITE_FAULT = {
  add: `CREATE TRIGGER fail_inserts BEFORE INSERT ON ${TABLE} BEGIN SELECT json_extract('{}', 'disk full'); END`,
  remove: 'DROP TRIGGER fail_inserts',
  refuse: (id: string) =>
    `CREATE TRIGGER refuse_${id} BEFORE INSERT ON ${TABLE} WHEN NEW.settlement_id = '${id}' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
  refuseQuarantine: (id: string) =>
    `CREATE TRIGGER refuse_quarantine_${id} BEFORE INSERT ON collection_quarantine WHEN NEW.session_id = '${id}' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
  freezeQuarantine:
    "CREATE TRIGGER quarantine_read_only BEFORE INSERT ON collection_quarantine BEGIN SELECT RAISE(ABORT, 'read-only'); END",
  thawQuarantine: 'DROP TRIGGER quarantine_read_only',
};

const POSTGRES_FAULT = {
  add: `CREATE FUNCTION fail_inserts() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$;
        CREATE TRIGGER fail_inserts BEFORE INSERT ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION fail_inserts()`,
  remove: `DROP TRIGGER fail_inserts ON ${TABLE}; DROP FUNCTION fail_inserts()`,
  refuse: (
    id: string,
  ) => `CREATE FUNCTION refuse_${id}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused' USING ERRCODE = 'check_violation'; END $$;
        CREATE TRIGGER refuse_${id} BEFORE INSERT ON ${TABLE} FOR EACH ROW WHEN (NEW.settlement_id = '${id}') EXECUTE FUNCTION refuse_${id}()`,
  refuseQuarantine: (
    id: string,
  ) => `CREATE FUNCTION refuse_quarantine_${id}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused' USING ERRCODE = 'check_violation'; END $$;
        CREATE TRIGGER refuse_quarantine_${id} BEFORE INSERT ON collection_quarantine FOR EACH ROW WHEN (NEW.session_id = '${id}') EXECUTE FUNCTION refuse_quarantine_${id}()`,
  freezeQuarantine: `CREATE FUNCTION quarantine_read_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'read-only'; END $$;
        CREATE TRIGGER quarantine_read_only BEFORE INSERT ON collection_quarantine FOR EACH ROW EXECUTE FUNCTION quarantine_read_only()`,
  thawQuarantine: 'DROP TRIGGER quarantine_read_only ON collection_quarantine; DROP FUNCTION quarantine_read_only()',
};

/** Opens a store on `url` for the current test, closed when it finishes (before its database goes). */
async function openOn(url: string, logger: Logger = silent, options: BatchOptions = {}): Promise<CollectionStore> {
  const store = await createNotificationStore(url, { ...options, logger });
  onCleanup(() => store.close());
  return store;
}

const sqliteFile: StoreBackend<UrlTestDatabase> = {
  name: 'SQLite file',
  enabled: true,
  shared: true,
  writesBatchesAtOnce: false,
  async create() {
    const path = tempSqlitePath();
    const storeUrl = `sqlite:${path}`;
    const query = async (sql: string) => queryFile(path, sql);
    const exec = async (sql: string) => {
      const database = new DatabaseSync(path, { timeout: 5_000 });
      try {
        database.exec(sql);
      } finally {
        database.close();
      }
    };
    return {
      storeUrl,
      open: (logger, options) => openOn(storeUrl, logger, options),
      query,
      exec,
      ...withFaultsAndCount(query, SQLITE_FAULT),
    };
  },
};

const sqliteMemory: StoreBackend = {
  name: 'SQLite in memory',
  enabled: true,
  shared: false,
  writesBatchesAtOnce: false,
  async create() {
    // The test keeps the connection: an in-memory database is visible to its own connection only.
    const database = new DatabaseSync(':memory:');
    onCleanup(() => database.isOpen && database.close());
    const query = async (sql: string) => database.prepare(sql).all();
    const exec = async (sql: string) => database.exec(sql);
    const open = async (logger: Logger = silent, options: BatchOptions = {}) => {
      const store = await createSqliteStore(database, { ...options, logger });
      onCleanup(() => store.close());
      return store;
    };
    return { open, query, exec, ...withFaultsAndCount(query, SQLITE_FAULT) };
  },
};

const postgres: StoreBackend<UrlTestDatabase> = {
  name: 'PostgreSQL',
  enabled: databaseUrl !== undefined,
  shared: true,
  writesBatchesAtOnce: true,
  async create() {
    const storeUrl = await isolatedPostgresUrl(databaseUrl ?? '');
    const query = (sql: string) => queryPostgres(storeUrl, sql);
    const exec = async (sql: string) => void (await queryPostgres(storeUrl, sql));
    return {
      storeUrl,
      open: (logger, options) => openOn(storeUrl, logger, options),
      query,
      exec,
      ...withFaultsAndCount(query, POSTGRES_FAULT),
    };
  },
};

/** Every store backend, for `describe.each` in the store suites; PostgreSQL is disabled without DATABASE_URL. */
export const storeBackends: StoreBackend[] = [sqliteFile, sqliteMemory, postgres];

/** The backends the app reaches by STORE_URL (all but in-memory SQLite), for app-level suites. */
export const urlStoreBackends: StoreBackend<UrlTestDatabase>[] = [sqliteFile, postgres];

/**
 * Resolves once every notification at or below `positions` is settled, so the log reads list them.
 * On PostgreSQL a commit settles once older transactions end, and the server's other sessions
 * (other suites running in parallel) may still have some open: a read right after an insert could
 * miss it. On SQLite everything committed is settled at once.
 */
export async function untilSettled(store: NotificationStore, positions: readonly (LogPosition | InsertResult)[]): Promise<void> {
  const newest = positions
    .map((item) => ('status' in item ? (item.status === 'inserted' ? item.notification.position : START_OF_LOG) : item))
    .reduce((a, b) => (comparePositions(a, b) >= 0 ? a : b), START_OF_LOG);
  await waitFor(async () => (comparePositions(await store.settledHead(), newest) >= 0 ? true : undefined));
}
