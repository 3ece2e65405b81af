import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { liveTransfers, notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { captureLogs } from './helpers/logs.ts';
import { scrape, subscribersLive } from './helpers/metrics.ts';
import { redisServerAvailable, startOwnRedis } from './helpers/redis-server.ts';
import { tempSqlitePath } from './helpers/stores.ts';
import { waitFor } from './helpers/wait.ts';

// Every replica shares one Redis: its outage must not take them out of the load balancer, and live
// delivery goes on from the store (the feed's timer) until it is back.

async function readiness(app: TestApp): Promise<{ status: number; body: Record<string, string> }> {
  const response = await request(`${app.baseUrl}/health/ready`);
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, string> };
}

describe.runIf(redisServerAvailable())('a Redis outage', () => {
  it('keeps every replica ready and delivering, shows in pubsub_connected and logs the loss and the return once', async () => {
    const redis = await startOwnRedis();
    const storeUrl = `sqlite:${tempSqlitePath()}`;
    const { logger, logs, logged } = captureLogs();
    const a = await startApp({ STORE_URL: storeUrl, PUBSUB_URL: redis.url }, { logger });
    const b = await startApp({ STORE_URL: storeUrl, PUBSUB_URL: redis.url });
    const onB = liveTransfers(b);
    await subscribersLive(b, 1);

    await redis.stop();
    for (const app of [a, b]) {
      await waitFor(async () => ((await scrape(app, 'pubsub_connected')) === 0 ? true : undefined));
      expect(await readiness(app)).toEqual({ status: 200, body: { status: 'ready', store: 'ok', pubsub: 'down' } });
    }
    await logged((line) => String(line.msg).startsWith('Redis pub/sub link lost'));
    // Stored on A, which cannot tell B: B's feed reads it from the store on its timer.
    const during = notificationBody();
    expect((await a.deliver(during)).reply.responseCode).toBe('00');
    await onB.first((id) => id === during.settlementId);

    await redis.start();
    for (const app of [a, b]) await waitFor(async () => ((await scrape(app, 'pubsub_connected')) === 1 ? true : undefined), 10_000);
    await logged((line) => String(line.msg).startsWith('Redis pub/sub link restored'));
    const after = notificationBody();
    expect((await a.deliver(after)).reply.responseCode).toBe('00');
    await onB.first((id) => id === after.settlementId);
    expect([...onB]).toEqual([during.settlementId, after.settlementId]);
    expect(logs.filter((line) => String(line.msg).startsWith('Redis pub/sub link')).map((line) => line.level)).toEqual([40, 30]);
  });

  it('starts a replica while Redis is down: ready, answering 00 and delivering from the store, and joining once Redis is back', async () => {
    const redis = await startOwnRedis();
    const storeUrl = `sqlite:${tempSqlitePath()}`;
    const a = await startApp({ STORE_URL: storeUrl, PUBSUB_URL: redis.url });
    await redis.stop();
    const { logger, logged } = captureLogs();
    // Waits out the connect timeout, then starts without Redis.
    const b = await startApp({ STORE_URL: storeUrl, PUBSUB_URL: redis.url }, { logger });
    await logged((line) => String(line.msg).includes('is not reachable: starting without it'));
    expect(await readiness(b)).toEqual({ status: 200, body: { status: 'ready', store: 'ok', pubsub: 'down' } });
    const onB = liveTransfers(b);
    await subscribersLive(b, 1);
    const during = notificationBody();
    expect((await a.deliver(during)).reply.responseCode).toBe('00');
    await onB.first((id) => id === during.settlementId);

    await redis.start();
    await waitFor(async () => ((await scrape(b, 'pubsub_connected')) === 1 ? true : undefined), 10_000);
    await logged((line) => String(line.msg).startsWith('Redis pub/sub link restored'));
    // B's channel, asked for while Redis was down, is live now: A's announcement reaches it.
    await waitFor(async () => ((await scrape(a, 'pubsub_connected')) === 1 ? true : undefined), 10_000);
    const wakes = async () => (await scrape(b, 'collection_log_reads_total{trigger="wake",outcome="ok"}')) ?? 0;
    const before = await wakes();
    const after = notificationBody();
    expect((await a.deliver(after)).reply.responseCode).toBe('00');
    await onB.first((id) => id === after.settlementId);
    await waitFor(async () => ((await wakes()) > before ? true : undefined));
  }, 40_000);
});
