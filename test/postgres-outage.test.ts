import { request } from 'undici';
import { createPostgresStore } from '../src/store/postgres.ts';
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { subscribersLive } from './helpers/metrics.ts';
import { newNotification } from './helpers/notifications.ts';
import { databaseUrl, isolatedPostgresUrl, silent } from './helpers/stores.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';
import { waitFor } from './helpers/wait.ts';

// A PostgreSQL restart, as the subgraph sees it: every connection drops, new ones are refused for a
// while, then the server is back. The proxy plays it without touching the server other suites share.
describe.skipIf(!databaseUrl)('through a PostgreSQL restart', () => {
  it('answers 03 while the database is away, then 00 to the bank’s retry: each notification stored and pushed once, in order, no subscription ended', async () => {
    const proxy = await startTcpProxy(await isolatedPostgresUrl(databaseUrl!));
    const app = await startApp({ STORE_URL: proxy.url });
    const received: string[] = [];
    let ended = false;
    app.wsClient().subscribe<{ incomingTransfer: { settlementId: string } }>(
      { query: 'subscription { incomingTransfer { settlementId } }' },
      {
        next: (result) => void (result.data && received.push(result.data.incomingTransfer.settlementId)),
        error: () => (ended = true),
        complete: () => (ended = true),
      },
    );
    await subscribersLive(app, 1);
    const before = notificationBody();
    expect((await app.deliver(before)).reply.responseCode).toBe('00');
    await waitFor(() => (received.length === 1 ? true : undefined));

    proxy.cut();
    const during = notificationBody();
    // Nothing stored, so the bank's retry can succeed; readiness tells the balancer meanwhile.
    expect((await app.deliver(during)).reply.responseCode).toBe('03');
    expect((await request(`${app.baseUrl}/health/ready`)).statusCode).toBe(503);

    proxy.restore();
    const retried = await waitFor(async () => {
      const { reply } = await app.deliver(during);
      return reply.responseCode === '00' ? reply : undefined;
    }, 10_000);
    expect(retried.responseCode).toBe('00');
    expect((await app.deliver(during)).reply.responseCode).toBe('01');
    const after = notificationBody();
    expect((await app.deliver(after)).reply.responseCode).toBe('00');

    await waitFor(() => (received.length >= 3 ? true : undefined), 10_000);
    expect(received).toEqual([before.settlementId, during.settlementId, after.settlementId]);
    expect(ended).toBe(false);
    expect((await request(`${app.baseUrl}/health/ready`)).statusCode).toBe(200);
  }, 30_000);
});

// A network that stops carrying bytes without closing anything: no error ever arrives, and the
// database's own statement_timeout cannot answer either. Only a deadline on our side ends the wait.
describe.skipIf(!databaseUrl)('when PostgreSQL stops answering', () => {
  it('fails the statement at the answer deadline, drops that connection, and writes again on a fresh one once the link is back', async () => {
    const proxy = await startTcpProxy(await isolatedPostgresUrl(databaseUrl!));
    const store = await createPostgresStore(proxy.url, { logger: silent });
    onCleanup(() => store.close());
    const first = newNotification();
    expect((await store.insert(first)).status).toBe('inserted');

    proxy.stall();
    const stalled = newNotification();
    const started = performance.now();
    // The store's own deadline (seconds), not the hang it would be without one (hours of TCP keep-alive).
    await expect(store.insert(stalled)).rejects.toThrow(/no answer within \d+ ms/);
    expect(performance.now() - started).toBeLessThan(30_000);
    // That connection is gone; a new one cannot be opened through the stalled link either.
    await expect(store.ping()).rejects.toBeInstanceOf(Error);

    proxy.restore();
    // The stalled connections were dropped: these go out on new ones, and are answered.
    await store.ping();
    const [stored] = await store.getMany([first.settlementId]);
    expect(stored?.settlementId).toBe(first.settlementId);
    const retried = await store.insert(stalled);
    // The failed statement may have committed after all (its bytes reached the server once the link was back):
    // either way the retry is answered, and the notification is stored once.
    expect(['inserted', 'duplicate']).toContain(retried.status);
    expect((await store.getMany([stalled.settlementId]))[0]?.settlementId).toBe(stalled.settlementId);
  }, 60_000);
});
