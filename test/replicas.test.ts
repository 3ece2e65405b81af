import { describe, expect, it } from 'vitest';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { serviceUrl, uniqueChannelPrefix } from './helpers/services.ts';
import { databaseUrl, isolatedPostgresUrl, tempSqlitePath } from './helpers/stores.ts';
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
// subscribers on the other, once.
const redisUrl = serviceUrl('REDIS_URL');

describe.skipIf(!databaseUrl || !redisUrl)('replicas on PostgreSQL and Redis', () => {
  async function startReplicas(): Promise<[TestApp, TestApp]> {
    const env = { STORE_URL: await isolatedPostgresUrl(databaseUrl!), PUBSUB_URL: redisUrl! };
    const pubsubChannelPrefix = uniqueChannelPrefix();
    const a = await startApp(env, { pubsubChannelPrefix });
    const b = await startApp(env, { pubsubChannelPrefix });
    return [a, b];
  }

  async function liveSubscriber(app: TestApp) {
    const events: string[] = [];
    app.wsClient().subscribe<{ incomingTransfer: { settlementId: string } }>(
      { query: 'subscription { incomingTransfer { settlementId } }' },
      { next: (result) => result.data && events.push(result.data.incomingTransfer.settlementId), error: () => undefined, complete: () => undefined },
    );
    await waitFor(async () => ((await app.app.services.metrics.activeSubscriptions.get()).values[0]?.value === 1 ? true : undefined));
    return events;
  }

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
});
