import pg from 'pg';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { scrapeSum, subscribersLive } from './helpers/metrics.ts';
import { serviceUrl } from './helpers/services.ts';
import { databaseUrl, isolatedPostgresUrl, tempSqlitePath } from './helpers/stores.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';
import { Inbox, waitFor } from './helpers/wait.ts';

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
  async function startReplicas(redisUrlOfA = redisUrl!, storeUrl?: string): Promise<[TestApp, TestApp]> {
    storeUrl ??= await isolatedPostgresUrl(databaseUrl!);
    // One store, so one channel: replicas of a store hear each other through any Redis connection.
    const a = await startApp({ STORE_URL: storeUrl, PUBSUB_URL: redisUrlOfA });
    const b = await startApp({ STORE_URL: storeUrl, PUBSUB_URL: redisUrl! });
    return [a, b];
  }

  type Subscriber = Inbox<string> & { ended?: string };

  /** A live subscriber's settlementIds, in arrival order, with whether its subscription ended. */
  async function liveSubscriber(app: TestApp): Promise<Subscriber> {
    const events: Subscriber = new Inbox<string>();
    app.wsClient().subscribe<{ incomingTransfer: { settlementId: string } }>(
      { query: 'subscription { incomingTransfer { settlementId } }' },
      {
        next: (result) => result.data && events.push(result.data.incomingTransfer.settlementId),
        error: () => (events.ended = 'error'),
        complete: () => (events.ended = 'complete'),
      },
    );
    await subscribersLive(app, 1);
    return events;
  }

  /** Resolves once every subscriber has received `settlementId`. */
  const received = (subscribers: Inbox<string>[], settlementId: unknown) =>
    Promise.all(subscribers.map((events) => events.first((id) => id === settlementId)));

  /** What the replica's /health/ready says of its pub/sub: `ok` or `down`. */
  const pubsubHealth = async (app: TestApp) =>
    ((await (await request(`${app.baseUrl}/health/ready`)).body.json()) as { pubsub: string }).pubsub;

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
    await received([onB], marker.settlementId);
    expect([...onB]).toEqual([body.settlementId, marker.settlementId]);
  });

  it('resumes on one replica from a cursor seen on the other', async () => {
    const [a, b] = await startReplicas();
    const first = notificationBody();
    const second = notificationBody();
    await a.deliver(first);
    await b.deliver(second);
    const { data } = await b.query(`{ collectionNotification(settlementId: "${first.settlementId}") { cursor } }`);
    const events = new Inbox<string>();
    a.wsClient().subscribe<{ incomingTransfer: { settlementId: string } }>(
      {
        query: 'subscription($after: String) { incomingTransfer(after: $after) { settlementId } }',
        variables: { after: data!.collectionNotification.cursor },
      },
      {
        next: (result) => result.data && events.push(result.data.incomingTransfer.settlementId),
        error: () => undefined,
        complete: () => undefined,
      },
    );
    await events.atLeast(1);
    const third = notificationBody();
    await b.deliver(third);
    await events.atLeast(2);
    expect([...events]).toEqual([second.settlementId, third.settlementId]);
  });

  it('delivers to live subscribers on both replicas while one replica is cut off from Redis, each once and in order', async () => {
    const proxy = await startTcpProxy(redisUrl!);
    const [a, b] = await startReplicas(proxy.url);
    const subscribers = [await liveSubscriber(a), await liveSubscriber(b)];
    const before = notificationBody();
    await a.deliver(before);
    await received(subscribers, before.settlementId);

    proxy.cut();
    await waitFor(async () => ((await pubsubHealth(a)) === 'down' ? true : undefined));
    // A stores but cannot publish; B publishes, but A never hears it: only the logs' timers deliver.
    const onCutReplica = notificationBody();
    expect((await a.deliver(onCutReplica)).reply.responseCode).toBe('00');
    const onOtherReplica = notificationBody();
    expect((await b.deliver(onOtherReplica)).reply.responseCode).toBe('00');
    await received(subscribers, onOtherReplica.settlementId);
    await received(subscribers, onCutReplica.settlementId);

    proxy.restore();
    await waitFor(async () => ((await pubsubHealth(a)) === 'ok' ? true : undefined), 10_000);
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

  it('delivers two notifications whose commits finish out of order to subscribers on both replicas, once each, in log order', async () => {
    const storeUrl = await isolatedPostgresUrl(databaseUrl!);
    const [a, b] = await startReplicas(redisUrl, storeUrl);
    const subscribers = [await liveSubscriber(a), await liveSubscriber(b)];
    const admin = new pg.Client({ connectionString: storeUrl });
    await admin.connect();
    onCleanup(() => admin.end());
    // A's insert of `slow` takes its transaction id and seq, then stalls until the test lets it go.
    const slow = notificationBody();
    const gate = 424_244;
    await admin.query(`CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.settlement_id = '${slow.settlementId}' THEN PERFORM pg_advisory_xact_lock(${gate}); END IF; RETURN NEW; END $$;
      CREATE TRIGGER stall BEFORE INSERT ON collection_notifications FOR EACH ROW EXECUTE FUNCTION stall()`);
    await admin.query('SELECT pg_advisory_lock($1)', [gate]);
    const slowReply = a.deliver(slow);
    await waitFor(async () => {
      const { rows } = await admin.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted", [gate]);
      return rows.length > 0 ? true : undefined;
    });

    // B commits `fast` meanwhile: no lock to wait for, so it is acknowledged first.
    const fast = notificationBody();
    expect((await b.deliver(fast)).reply.responseCode).toBe('00');
    // Both followers read after that commit, and hand out nothing: `slow` could still land before it.
    const reads = (app: TestApp) => scrapeSum(app, 'collection_log_reads_total');
    const readsBefore = await Promise.all([a, b].map(reads));
    await waitFor(async () => ((await Promise.all([a, b].map(reads))).every((n, i) => n >= readsBefore[i]! + 2) ? true : undefined));
    expect(subscribers.map((events) => [...events])).toEqual([[], []]);

    await admin.query('SELECT pg_advisory_unlock($1)', [gate]);
    expect((await slowReply).reply.responseCode).toBe('00');
    await received(subscribers, fast.settlementId);
    for (const events of subscribers) expect([...events]).toEqual([slow.settlementId, fast.settlementId]);
  });
});
