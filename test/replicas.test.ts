import { describe, expect, it } from 'vitest';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { serviceUrl, uniqueChannelPrefix } from './helpers/services.ts';
import { databaseUrl, isolatedPostgresUrl, tempSqlitePath } from './helpers/stores.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';
import { waitFor } from './helpers/wait.ts';

const CONCURRENT = 200;

/** Posts the same notification `CONCURRENT` times at once, spread over the apps; the reply codes. */
async function deliverConcurrently(apps: TestApp[], body: Record<string, unknown>): Promise<string[]> {
  const replies = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => apps[i % apps.length]!.deliver(body)));
  return replies.map((r) => r.reply.responseCode);
}

const count = (codes: string[], code: string) => codes.filter((c) => c === code).length;

describe('exactly once under concurrent deliveries', () => {
  it(`gives one 00 and ${CONCURRENT - 1} 01 to ${CONCURRENT} concurrent deliveries of one settlementId on SQLite`, async () => {
    const app = await startApp({ STORE_URL: `sqlite:${tempSqlitePath()}` });
    const body = notificationBody();
    const codes = await deliverConcurrently([app], body);
    expect([count(codes, '00'), count(codes, '01')]).toEqual([1, CONCURRENT - 1]);
    const { data } = await app.query('{ collectionNotifications { edges { node { settlementId } } } }');
    expect(data!.collectionNotifications.edges).toHaveLength(1);
  });
});

// Replicas share PostgreSQL and Redis: exactly one 00 across them, and a delivery on one reaches
// subscribers on the other, once, even while a replica's link to Redis is cut.
const redisUrl = serviceUrl('REDIS_URL');

describe.skipIf(!databaseUrl || !redisUrl)('replicas on PostgreSQL and Redis', () => {
  /** Two replicas on one database and one Redis; `redisUrlOfA` puts a proxy between A and Redis. */
  async function startReplicas(redisUrlOfA = redisUrl!): Promise<[TestApp, TestApp]> {
    const storeUrl = await isolatedPostgresUrl(databaseUrl!);
    const pubsubChannelPrefix = uniqueChannelPrefix();
    const a = await startApp({ STORE_URL: storeUrl, PUBSUB_URL: redisUrlOfA }, { pubsubChannelPrefix });
    const b = await startApp({ STORE_URL: storeUrl, PUBSUB_URL: redisUrl! }, { pubsubChannelPrefix });
    return [a, b];
  }

  /** A live subscriber's settlementIds, in arrival order, with whether its subscription ended. */
  async function liveSubscriber(app: TestApp): Promise<string[] & { ended?: string }> {
    const events: string[] & { ended?: string } = [];
    app.wsClient().subscribe<{ incomingTransfer: { settlementId: string } }>(
      { query: 'subscription { incomingTransfer { settlementId } }' },
      {
        next: (result) => result.data && events.push(result.data.incomingTransfer.settlementId),
        error: () => (events.ended = 'error'),
        complete: () => (events.ended = 'complete'),
      },
    );
    await waitFor(async () => ((await app.app.services.metrics.activeSubscriptions.get()).values[0]?.value === 1 ? true : undefined));
    return events;
  }

  /** Resolves once every subscriber has received `settlementId`. */
  const received = (subscribers: string[][], settlementId: unknown) =>
    waitFor(() => (subscribers.every((events) => events.includes(settlementId as string)) ? true : undefined));

  it(`gives one 00 and ${CONCURRENT - 1} 01 to ${CONCURRENT} concurrent deliveries split over two replicas`, async () => {
    const [a, b] = await startReplicas();
    const codes = await deliverConcurrently([a, b], notificationBody());
    expect([count(codes, '00'), count(codes, '01')]).toEqual([1, CONCURRENT - 1]);
  });

  it('delivers a notification accepted on one replica to a subscriber on the other, once', async () => {
    const [a, b] = await startReplicas();
    const onB = await liveSubscriber(b);
    const body = notificationBody();
    await deliverConcurrently([a, b], body);
    const marker = notificationBody();
    await a.deliver(marker);
    await waitFor(() => (onB.includes(marker.settlementId as string) ? true : undefined));
    expect(onB).toEqual([body.settlementId, marker.settlementId]);
  });

  it('resumes on one replica from a cursor seen on the other', async () => {
    const [a, b] = await startReplicas();
    const first = notificationBody();
    const second = notificationBody();
    await a.deliver(first);
    await b.deliver(second);
    const { data } = await b.query(`{ collectionNotification(settlementId: "${first.settlementId}") { cursor } }`);
    const events: string[] = [];
    a.wsClient().subscribe<{ incomingTransfer: { settlementId: string } }>(
      { query: 'subscription($after: String) { incomingTransfer(after: $after) { settlementId } }', variables: { after: data!.collectionNotification.cursor } },
      { next: (result) => result.data && events.push(result.data.incomingTransfer.settlementId), error: () => undefined, complete: () => undefined },
    );
    await waitFor(() => (events.length >= 1 ? true : undefined));
    const third = notificationBody();
    await b.deliver(third);
    await waitFor(() => (events.length >= 2 ? true : undefined));
    expect(events).toEqual([second.settlementId, third.settlementId]);
  });

  it('delivers to live subscribers on both replicas while one replica is cut off from Redis, each once and in order', async () => {
    const proxy = await startTcpProxy(redisUrl!);
    const [a, b] = await startReplicas(proxy.url);
    const subscribers = [await liveSubscriber(a), await liveSubscriber(b)];
    const before = notificationBody();
    await a.deliver(before);
    await received(subscribers, before.settlementId);

    proxy.cut();
    await waitFor(() => a.app.services.pubsub.ping().then(() => undefined, () => true));
    // A stores but cannot publish; B publishes, but A never hears it: only the logs' timers deliver.
    const onCutReplica = notificationBody();
    expect((await a.deliver(onCutReplica)).reply.responseCode).toBe('00');
    const onOtherReplica = notificationBody();
    expect((await b.deliver(onOtherReplica)).reply.responseCode).toBe('00');
    await received(subscribers, onOtherReplica.settlementId);
    await received(subscribers, onCutReplica.settlementId);

    proxy.restore();
    await waitFor(() => a.app.services.pubsub.ping().then(() => true), 10_000);
    const after = [notificationBody(), notificationBody()];
    await a.deliver(after[0]);
    await b.deliver(after[1]);
    await received(subscribers, after[1]!.settlementId);

    const expected = [before, onCutReplica, onOtherReplica, ...after].map((body) => body.settlementId);
    for (const events of subscribers) {
      expect([...events]).toEqual(expected);
      expect(events.ended).toBeUndefined();
    }
  });
});
