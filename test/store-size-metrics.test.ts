/**
 * The store's size on GET /metrics: `collection_store_bytes` and `collection_store_notifications`,
 * on every backend the app reaches by STORE_URL, read the way Prometheus reads them.
 */
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp } from './helpers/app.ts';
import { scrape } from './helpers/metrics.ts';
import { urlStoreBackends } from './helpers/stores.ts';

describe.each(urlStoreBackends)('the store size metrics on $name', (backend) => {
  it.runIf(backend.enabled)('shows the notifications stored and the bytes the database says they take', async () => {
    const database = await backend.create();
    const app = await startApp({ STORE_URL: database.storeUrl });
    const bodies = [notificationBody(), notificationBody(), notificationBody()];
    for (const body of bodies) expect((await app.deliver(body)).reply.responseCode).toBe('00');
    expect((await app.deliver(bodies[0])).reply.responseCode).toBe('01');
    // PostgreSQL's estimate follows its statistics, which autovacuum keeps up to date; here at once.
    const kind = database.storeUrl.startsWith('postgres') ? 'postgres' : 'sqlite';
    if (kind === 'postgres') await database.query('ANALYZE collection_notifications');

    expect(await scrape(app, 'collection_store_notifications')).toBe(3);
    const bytes = await scrape(app, 'collection_store_bytes');
    const onDisk =
      kind === 'sqlite'
        ? 'SELECT (SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size()) AS bytes'
        : "SELECT pg_total_relation_size('collection_notifications') AS bytes";
    expect(bytes).toBe(Number((await database.query(onDisk))[0]?.bytes));
    expect(bytes).toBeGreaterThan(3 * 400);
  });
});
