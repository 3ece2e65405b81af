import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { liveTransfers, notificationBody, startApp } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { scrapeSum, subscribersLive } from './helpers/metrics.ts';
import { serviceUrl } from './helpers/services.ts';
import { queryFile, tempSqlitePath } from './helpers/stores.ts';
import { waitFor } from './helpers/wait.ts';

// Two deployments (staging and production), each with its own store, pointed at one Redis: Redis
// channels are global to the server, whatever the database number in the URL.
const redisUrl = serviceUrl('REDIS_URL');

describe.skipIf(!redisUrl)('deployments on different stores sharing one Redis', () => {
  it('never wake each other, and each delivers every one of its own transfers', async () => {
    const productionPath = tempSqlitePath();
    const staging = await startApp({ STORE_URL: `sqlite:${tempSqlitePath()}`, PUBSUB_URL: redisUrl! });
    const production = await startApp({ STORE_URL: `sqlite:${productionPath}`, PUBSUB_URL: redisUrl! });
    const wakes = () => scrapeSum(production, 'collection_log_reads_total', { trigger: 'wake' });

    const before = await wakes();
    // Staging is busy while production has nobody listening, then while it has.
    for (let i = 0; i < 3; i += 1) await Promise.all(Array.from({ length: 100 }, () => staging.deliver(notificationBody())));
    const onProduction = liveTransfers(production);
    await subscribersLive(production, 1);
    await Promise.all(Array.from({ length: 50 }, () => staging.deliver(notificationBody())));
    expect(await wakes()).toBe(before);

    const ours = Array.from({ length: 5 }, () => notificationBody());
    for (const body of ours) expect((await production.deliver(body)).reply.responseCode).toBe('00');
    await onProduction.atLeast(5);
    expect([...onProduction]).toEqual(ours.map((body) => body.settlementId));
  });

  it('hands out only what its own store holds when a message on its channel claims anything else', async () => {
    const path = tempSqlitePath();
    const production = await startApp({ STORE_URL: `sqlite:${path}`, PUBSUB_URL: redisUrl! });
    const wakes = () => scrapeSum(production, 'collection_log_reads_total', { trigger: 'wake' });
    const identity = String(queryFile(path, 'SELECT id FROM store_identity')[0]!.id);
    const forger = new Redis(redisUrl!);
    onCleanup(() => forger.quit());
    // Forged, stale or from an earlier build: positions far ahead, or no JSON object at all.
    const channel = `bank-subgraph:${identity}:notificationsStored`;
    for (const message of [
      JSON.stringify({
        replica: 'forged',
        txid: Number.MAX_SAFE_INTEGER,
        seq: Number.MAX_SAFE_INTEGER,
        settled: { txid: 1e15, seq: 1e15 },
      }),
      JSON.stringify({ seq: 99_999_999 }),
      'not json',
    ]) {
      await forger.publish(channel, message);
    }
    // Heard while nobody listens, when a replica once moved to whatever position it was told.
    await waitFor(async () => ((await wakes()) >= 1 ? true : undefined));
    const onProduction = liveTransfers(production);
    await subscribersLive(production, 1);
    const ours = Array.from({ length: 5 }, () => notificationBody());
    for (const body of ours) expect((await production.deliver(body)).reply.responseCode).toBe('00');
    await onProduction.atLeast(5);
    expect([...onProduction]).toEqual(ours.map((body) => body.settlementId));
  });
});
