// Fixtures of the store suites (store.test.ts, index.test.ts): one fresh database per backend and test,
// and notifications as the webhook hands them over. Imported by tests only.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { pino } from 'pino';
import { isolatedPostgresUrl, serviceUrl } from '../../test/helpers/services.ts';
import type { Logger } from '../logger.ts';
import type { BatchOptions } from './batch.ts';
import { createNotificationStore } from './index.ts';
import { createSqliteStore } from './sqlite.ts';
import type { NotificationStore } from './types.ts';

export const databaseUrl = serviceUrl('DATABASE_URL');

/** A logger whose lines the test can read, to check what the store reported. */
export function capturingLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

/** One database of a backend, fresh for each test. */
export interface TestDatabase {
  /** A new store on this database (an in-memory database backs only one). */
  open(logger?: Logger, options?: BatchOptions): Promise<NotificationStore>;
  /** Runs SQL on the database beside the store: fault injection and inspection. */
  query(sql: string): Promise<Record<string, unknown>[]>;
  drop(): Promise<void>;
}

export interface Backend {
  name: string;
  enabled: boolean;
  /** Separate store instances share the data: two replicas, or close then reopen. */
  shared: boolean;
  create(): Promise<TestDatabase>;
  /** SQL that makes every insert fail inside the database, and SQL that undoes it. */
  fault: { add: string; remove: string };
}

export const silent = pino({ level: 'silent' });

export function queryFile(path: string, sql: string): Record<string, unknown>[] {
  const database = new DatabaseSync(path, { timeout: 5_000 });
  try {
    return database.prepare(sql).all();
  } finally {
    database.close();
  }
}

const SQLITE_FAULT = {
  add: "CREATE TRIGGER fail_inserts BEFORE INSERT ON collection_notifications BEGIN SELECT RAISE(ABORT, 'disk full'); END",
  remove: 'DROP TRIGGER fail_inserts',
};

export const backends: Backend[] = [
  {
    name: 'SQLite file',
    enabled: true,
    shared: true,
    fault: SQLITE_FAULT,
    async create() {
      const directory = await mkdtemp(join(tmpdir(), 'store-test-'));
      const path = join(directory, 'collections.db');
      return {
        open: (logger = silent, options = {}) => createNotificationStore(`sqlite:${path}`, { ...options, logger }),
        query: async (sql) => queryFile(path, sql),
        drop: () => rm(directory, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'SQLite in memory',
    enabled: true,
    shared: false,
    fault: SQLITE_FAULT,
    async create() {
      // The test keeps the connection: an in-memory database is visible to its own connection only.
      const database = new DatabaseSync(':memory:');
      return {
        open: (logger = silent, options = {}) => createSqliteStore(database, { ...options, logger }),
        query: async (sql) => database.prepare(sql).all(),
        drop: async () => {
          if (database.isOpen) database.close();
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    enabled: databaseUrl !== undefined,
    shared: true,
    fault: {
      add: `CREATE FUNCTION fail_inserts() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$;
            CREATE TRIGGER fail_inserts BEFORE INSERT ON collection_notifications FOR EACH ROW EXECUTE FUNCTION fail_inserts()`,
      remove: 'DROP TRIGGER fail_inserts ON collection_notifications; DROP FUNCTION fail_inserts()',
    },
    async create() {
      const schema = await isolatedPostgresUrl(databaseUrl ?? '');
      return {
        open: (logger = silent, options = {}) => createNotificationStore(schema.url, { ...options, logger }),
        async query(sql) {
          const client = new pg.Client({ connectionString: schema.url });
          await client.connect();
          try {
            const result = await client.query(sql);
            return (Array.isArray(result) ? result.at(-1) : result).rows;
          } finally {
            await client.end();
          }
        },
        drop: () => schema.drop(),
      };
    },
  },
];

/** Things a test started, undone in reverse order after it (stores close before their database goes). */
export function createCleanups() {
  const pending: (() => Promise<unknown>)[] = [];
  return {
    add(...cleanups: (() => Promise<unknown>)[]) {
      pending.push(...cleanups);
    },
    async run() {
      for (const cleanup of pending.splice(0).reverse()) await cleanup();
    },
  };
}
