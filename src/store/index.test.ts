import { writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import {
  capturingLogger,
  databaseUrl,
  isolatedPostgresUrl,
  postgresSession,
  queryFile,
  silent,
  tempDirectory,
} from '../../test/helpers/stores.ts';
import { createNotificationStore } from './index.ts';

describe('createNotificationStore', () => {
  it('opens sqlite:<relative path>, creating the missing parent directories', async () => {
    const directory = tempDirectory();
    const path = relative(process.cwd(), join(directory, 'data', 'nested', 'collections.db'));
    const store = await createNotificationStore(`sqlite:${path}`, { logger: silent });
    onCleanup(() => store.close());
    expect(store.kind).toBe('sqlite');
    await store.insert(notification());
    expect(queryFile(join(directory, 'data', 'nested', 'collections.db'), 'PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
  });

  it('opens sqlite::memory:', async () => {
    const store = await createNotificationStore('sqlite::memory:', { logger: silent });
    onCleanup(() => store.close());
    expect(await store.insert(notification())).toMatchObject({ status: 'inserted' });
  });

  it('refuses an unknown scheme without echoing the URL', async () => {
    const error = await createNotificationStore('mysql://root:hunter2@db/bank', { logger: silent }).catch((caught: unknown) => caught);
    expect(String(error)).toMatch(/sqlite:<path>/);
    expect(String(error)).not.toContain('hunter2');
  });

  it('names the sqlite store when its directory cannot be created', async () => {
    const directory = tempDirectory();
    await writeFile(join(directory, 'a-file'), '');
    const error = await createNotificationStore(`sqlite:${join(directory, 'a-file', 'x.db')}`, { logger: silent }).catch(
      (caught: unknown) => caught,
    );
    expect(String(error)).toMatch(/Could not open the sqlite store/);
  });

  it('fails on an unreachable PostgreSQL port without echoing the URL or password', async () => {
    const url = 'postgres://postgres:s3cret-Passw0rd@127.0.0.1:1/test';
    const { logger, lines } = capturingLogger();
    const error = await createNotificationStore(url, { logger }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toMatch(/Could not open the postgres store \(ECONNREFUSED\)/);
    for (const text of [String(error), JSON.stringify(error), (error as Error).stack ?? '', ...lines]) {
      expect(text).not.toContain('s3cret-Passw0rd');
      expect(text).not.toContain(url);
    }
  });

  it.runIf(databaseUrl !== undefined)(
    'fails on a PostgreSQL database that does not exist without echoing the URL or password',
    async () => {
      const url = new URL(databaseUrl ?? '');
      url.password = 's3cret-Passw0rd';
      url.pathname = '/no_such_database_for_store_test';
      const error = await createNotificationStore(url.toString(), { logger: silent }).catch((caught: unknown) => caught);
      expect(String(error)).toMatch(/Could not open the postgres store \(3D000\)/);
      expect(String(error)).not.toContain('s3cret-Passw0rd');
      expect(String(error)).not.toContain(url.toString());
    },
  );

  it('refuses a SQLite store made by a pre-release build, saying so and what to do, and leaves it as it was', async () => {
    const path = join(tempDirectory(), 'collections.db');
    const database = new DatabaseSync(path);
    database.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
    database.exec(
      "INSERT INTO schema_migrations VALUES (1, 'collection_notifications', '2026-11-01T00:00:00Z'), (2, 'collection_summaries', '2026-11-02T00:00:00Z')",
    );
    database.close();
    const error = await createNotificationStore(`sqlite:${path}`, { logger: silent }).catch((caught: unknown) => caught);
    expect(String(error)).toMatch(/made by a pre-release build of bank-subgraph/);
    expect(String(error)).toContain('Point STORE_URL at a new, empty database');
    expect(queryFile(path, "SELECT name FROM sqlite_master WHERE name = 'collection_notifications'")).toEqual([]);
  });

  it('refuses a SQLite store made before the quarantine, saying so and what to do, and leaves its notifications as they were', async () => {
    const path = join(tempDirectory(), 'collections.db');
    const store = await createNotificationStore(`sqlite:${path}`, { logger: silent });
    await store.insert(notification());
    await store.close();
    queryFile(path, 'DROP TABLE collection_quarantine');
    const error = await createNotificationStore(`sqlite:${path}`, { logger: silent }).catch((caught: unknown) => caught);
    expect(String(error)).toMatch(
      /made by a pre-release build of bank-subgraph \(its version 1, "store_schema", has no collection_quarantine/,
    );
    expect(String(error)).toContain('Point STORE_URL at a new, empty database');
    expect(queryFile(path, 'SELECT count(*) AS n FROM collection_notifications')).toEqual([{ n: 1 }]);
  });

  it.runIf(databaseUrl !== undefined)('refuses a PostgreSQL store made before the quarantine, saying so', async () => {
    const url = await isolatedPostgresUrl(databaseUrl!);
    const store = await createNotificationStore(url, { logger: silent });
    await store.close();
    const client = await postgresSession(url);
    await client.query('DROP TABLE collection_quarantine');
    const error = await createNotificationStore(url, { logger: silent }).catch((caught: unknown) => caught);
    expect(String(error)).toMatch(
      /Could not open the postgres store: this store was made by a pre-release build .*has no collection_quarantine/,
    );
  });

  it.runIf(databaseUrl !== undefined)('refuses a PostgreSQL store made by a pre-release build, saying so and what to do', async () => {
    const url = await isolatedPostgresUrl(databaseUrl!);
    const client = await postgresSession(url);
    await client.query(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
    );
    await client.query(
      "INSERT INTO schema_migrations (version, name) VALUES (1, 'collection_notifications'), (5, 'identifiers_in_byte_order')",
    );
    const error = await createNotificationStore(url, { logger: silent }).catch((caught: unknown) => caught);
    expect(String(error)).toMatch(/Could not open the postgres store: this store was made by a pre-release build/);
    expect((await client.query("SELECT to_regclass('collection_notifications') AS t")).rows).toEqual([{ t: null }]);
  });
});
