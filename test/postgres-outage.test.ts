import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp } from './helpers/app.ts';
import { subscribersLive } from './helpers/metrics.ts';
import { databaseUrl, isolatedPostgresUrl } from './helpers/stores.ts';
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
