import { describe, expect, it } from 'vitest';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import { storeBackends, type TestDatabase } from '../../test/helpers/stores.ts';

/** What the database itself says the store takes: the file's pages, or the table with its indexes. */
async function bytesOnDisk(database: TestDatabase, kind: 'sqlite' | 'postgres'): Promise<number> {
  const sql =
    kind === 'sqlite'
      ? 'SELECT (SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size()) AS bytes'
      : "SELECT pg_total_relation_size('collection_notifications') AS bytes";
  return Number((await database.query(sql))[0]?.bytes);
}

describe.each(storeBackends)('NotificationStore.size on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;

  /** PostgreSQL's estimate follows its statistics; ANALYZE brings them up to date, as autovacuum would. */
  async function analyzed(database: TestDatabase, kind: 'sqlite' | 'postgres'): Promise<void> {
    if (kind === 'postgres') await database.query('ANALYZE collection_notifications');
  }

  test('reports no notifications and the bytes the empty schema takes', async () => {
    const database = await backend.create();
    const store = await database.open();
    const size = await store.size();
    expect(size.approximateRows).toBe(0);
    expect(size.bytes).toBeGreaterThan(0);
    expect(size.bytes).toBe(await bytesOnDisk(database, store.kind));
  });

  test('counts what was stored, duplicates not, and grows in bytes with it', async () => {
    const database = await backend.create();
    const store = await database.open();
    const empty = await store.size();
    const batch = Array.from({ length: 300 }, () => notification({ rawBody: `{"tranRemarks":"${'x'.repeat(600)}"}` }));
    await Promise.all(batch.map((n) => store.insert(n)));
    expect(await store.insert(batch[0]!)).toEqual({ status: 'duplicate' });
    await analyzed(database, store.kind);

    const size = await store.size();
    expect(size.approximateRows).toBe(300);
    expect(size.bytes).toBeGreaterThan(empty.bytes + 300 * 600);
    expect(size.bytes).toBe(await bytesOnDisk(database, store.kind));
  });

  test('follows an archive of the oldest notifications', async () => {
    const database = await backend.create();
    const store = await database.open();
    for (let i = 0; i < 3; i += 1) await Promise.all(Array.from({ length: 50 }, () => store.insert(notification())));
    await database.query(
      'DELETE FROM collection_notifications WHERE seq IN (SELECT seq FROM collection_notifications ORDER BY seq LIMIT 100)',
    );
    await analyzed(database, store.kind);
    expect((await store.size()).approximateRows).toBe(50);
  });
});
