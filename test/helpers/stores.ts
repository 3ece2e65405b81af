import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { onCleanup } from './app.ts';
import { isolatedPostgresUrl, serviceUrl } from './services.ts';

/** A fresh, empty store of one backend for one test, with a way to make its commits fail. */
export interface StoreFixture {
  /** STORE_URL for the app. */
  storeUrl: string;
  /** Makes every insert fail inside the database (as a full disk would), storing nothing. */
  breakInserts(): Promise<void>;
  /** Undoes breakInserts. */
  repairInserts(): Promise<void>;
  /** Counts the stored notifications, straight from the database. */
  countRows(): Promise<number>;
}

export interface StoreBackend {
  name: string;
  create(): Promise<StoreFixture>;
}

const TABLE = 'collection_notifications';

function sqliteBackend(): StoreBackend {
  return {
    name: 'SQLite',
    async create() {
      const dir = mkdtempSync(join(tmpdir(), 'bank-subgraph-'));
      onCleanup(async () => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'collections.db');
      const run = async (sql: string) => {
        const db = new DatabaseSync(file);
        try {
          db.exec('PRAGMA busy_timeout = 5000');
          return db.prepare(sql).all();
        } finally {
          db.close();
        }
      };
      return {
        storeUrl: `sqlite:${file}`,
        breakInserts: async () => {
          await run(`CREATE TRIGGER fail_inserts BEFORE INSERT ON ${TABLE} BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
        },
        repairInserts: async () => {
          await run('DROP TRIGGER fail_inserts');
        },
        countRows: async () => Number((await run(`SELECT count(*) AS n FROM ${TABLE}`))[0]!.n),
      };
    },
  };
}

function postgresBackend(databaseUrl: string): StoreBackend {
  return {
    name: 'PostgreSQL',
    async create() {
      const isolated = await isolatedPostgresUrl(databaseUrl);
      onCleanup(() => isolated.drop());
      const run = async (sql: string) => {
        const client = new pg.Client({ connectionString: isolated.url });
        await client.connect();
        try {
          return (await client.query(sql)).rows;
        } finally {
          await client.end();
        }
      };
      return {
        storeUrl: isolated.url,
        breakInserts: async () => {
          await run(`CREATE FUNCTION fail_inserts() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'; END $$ LANGUAGE plpgsql`);
          await run(`CREATE TRIGGER fail_inserts BEFORE INSERT ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION fail_inserts()`);
        },
        repairInserts: async () => {
          await run(`DROP TRIGGER fail_inserts ON ${TABLE}`);
          await run('DROP FUNCTION fail_inserts()');
        },
        countRows: async () => Number((await run(`SELECT count(*) AS n FROM ${TABLE}`))[0].n),
      };
    },
  };
}

/**
 * Every store backend, for `describe.each`. PostgreSQL joins when DATABASE_URL is set; under
 * CI=true its absence throws, so CI fails rather than silently testing SQLite alone.
 */
export function storeBackends(): StoreBackend[] {
  const databaseUrl = serviceUrl('DATABASE_URL');
  return databaseUrl === undefined ? [sqliteBackend()] : [sqliteBackend(), postgresBackend(databaseUrl)];
}
