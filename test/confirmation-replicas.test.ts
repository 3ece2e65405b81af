/**
 * Two replicas on one PostgreSQL and one Redis: each notification is asked of the bank once, by
 * whichever replica claims it, and what one replica records releases the confirmed subscribers of
 * the other (woken through Redis, or by its timer while Redis is cut off).
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { notificationBody, type TestApp } from './helpers/app.ts';
import { confirmationOf, idsOf, startConfirmingApp, subscribe, transferOf } from './helpers/confirming.ts';
import { startFakeCollectionBank } from './helpers/fake-collection-bank.ts';
import { serviceUrl } from './helpers/services.ts';
import { databaseUrl, isolatedPostgresUrl } from './helpers/stores.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';
import { waitFor } from './helpers/wait.ts';

const redisUrl = serviceUrl('REDIS_URL');

/** What the replica's /health/ready says of its pub/sub: `ok` or `down`. */
const pubsubHealth = async (app: TestApp) =>
  ((await (await request(`${app.baseUrl}/health/ready`)).body.json()) as { pubsub: string }).pubsub;

describe.skipIf(!databaseUrl || !redisUrl)('confirmation on two replicas on PostgreSQL and Redis', () => {
  it('asks the bank about each notification once, whichever replica stored it', async () => {
    const storeUrl = await isolatedPostgresUrl(databaseUrl!);
    const bank = await startFakeCollectionBank();
    const env = { STORE_URL: storeUrl, PUBSUB_URL: redisUrl! };
    const replicas = [await startConfirmingApp(bank, env), await startConfirmingApp(bank, env)];
    const bodies = Array.from({ length: 40 }, () => notificationBody());
    for (const body of bodies) bank.know(transferOf(body));
    const codes = await Promise.all(bodies.map(async (body, i) => (await replicas[i % 2]!.deliver(body)).reply.responseCode));
    expect(codes.every((code) => code === '00')).toBe(true);

    for (const body of bodies) await confirmationOf(replicas[0]!, body.settlementId, 'CONFIRMED');
    const asked = new Map<string, number>();
    for (const r of bank.received) if (r.operation === 'verifyBySettlementId') asked.set(r.id, (asked.get(r.id) ?? 0) + 1);
    expect([...asked.keys()].sort()).toEqual(bodies.map((body) => body.settlementId).sort());
    expect([...asked.values()].every((count) => count === 1)).toBe(true);
  });

  it("releases one replica's confirmed subscribers on what the other recorded, through Redis and, while it is cut off, by its timer", async () => {
    const storeUrl = await isolatedPostgresUrl(databaseUrl!);
    const bank = await startFakeCollectionBank();
    // B's bank never answers it: every notification is confirmed by A, whoever stored it.
    const down = await startFakeCollectionBank();
    down.answerEvery({ status: 503 });
    const proxy = await startTcpProxy(redisUrl!);
    const a = await startConfirmingApp(bank, { STORE_URL: storeUrl, PUBSUB_URL: redisUrl! });
    const b = await startConfirmingApp(down, { STORE_URL: storeUrl, PUBSUB_URL: proxy.url });
    const onB = await subscribe(b, { confirmed: true }, 1);

    const first = notificationBody();
    bank.know(transferOf(first));
    expect((await b.deliver(first)).reply.responseCode).toBe('00');
    await confirmationOf(a, first.settlementId, 'CONFIRMED');
    await onB.first((event) => event.settlementId === first.settlementId);

    proxy.cut();
    await waitFor(async () => ((await pubsubHealth(b)) === 'down' ? true : undefined));
    const second = notificationBody();
    bank.know(transferOf(second));
    expect((await a.deliver(second)).reply.responseCode).toBe('00');
    await confirmationOf(a, second.settlementId, 'CONFIRMED');
    await onB.first((event) => event.settlementId === second.settlementId);

    expect(idsOf(onB)).toEqual([first.settlementId, second.settlementId]);
    expect(onB.ended).toBeUndefined();
    expect(down.calls('verifyBySettlementId')).toBeGreaterThan(0);
    expect(bank.calls('verifyBySettlementId')).toBe(2);
  }, 30_000);

  it('resumes a confirmed cursor of one replica on the other: the log of confirmations in the same order, no gap, no duplicate', async () => {
    const storeUrl = await isolatedPostgresUrl(databaseUrl!);
    const bank = await startFakeCollectionBank();
    const env = { STORE_URL: storeUrl, PUBSUB_URL: redisUrl! };
    const [a, b] = [await startConfirmingApp(bank, env), await startConfirmingApp(bank, env)];
    const onA = await subscribe(a, { confirmed: true }, 1);
    const deliverAll = async (count: number) => {
      const bodies = Array.from({ length: count }, () => notificationBody());
      for (const body of bodies) bank.know(transferOf(body));
      // Stored, and so confirmed, by both replicas at once: confirmations commit in any order.
      await Promise.all(bodies.map(async (body, i) => expect((await [a, b][i % 2]!.deliver(body)).reply.responseCode).toBe('00')));
      return bodies;
    };
    const early = await deliverAll(20);
    await onA.atLeast(20);
    // An app that gave value on the first eight on A resumes on B after the eighth's cursor.
    const onB = await subscribe(b, { confirmed: true, after: onA[7]!.cursor });
    const later = await deliverAll(20);
    await onA.atLeast(40);
    await onB.atLeast(32);
    expect(onB.map((event) => event.cursor)).toEqual(onA.slice(8).map((event) => event.cursor));
    expect(new Set(idsOf(onA))).toEqual(new Set([...early, ...later].map((body) => body.settlementId)));
    expect(onA.every((event) => event.status === 'CONFIRMED')).toBe(true);
  }, 30_000);
});
