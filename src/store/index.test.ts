import { writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import { capturingLogger, databaseUrl, queryFile, silent, tempDirectory } from '../../test/helpers/stores.ts';
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
    const error = await createNotificationStore(`sqlite:${join(directory, 'a-file', 'x.db')}`, { logger: silent }).catch((caught: unknown) => caught);
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

  it.runIf(databaseUrl !== undefined)('fails on a PostgreSQL database that does not exist without echoing the URL or password', async () => {
    const url = new URL(databaseUrl ?? '');
    url.password = 's3cret-Passw0rd';
    url.pathname = '/no_such_database_for_store_test';
    const error = await createNotificationStore(url.toString(), { logger: silent }).catch((caught: unknown) => caught);
    expect(String(error)).toMatch(/Could not open the postgres store \(3D000\)/);
    expect(String(error)).not.toContain('s3cret-Passw0rd');
    expect(String(error)).not.toContain(url.toString());
  });
});
