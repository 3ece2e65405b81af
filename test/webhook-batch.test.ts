import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';
import { notificationBody, signedHeaders, startApp } from './helpers/app.ts';
import { urlStoreBackends } from './helpers/stores.ts';

// Concurrent deliveries share a store transaction (group commit); each must still get its own code.
describe.each(urlStoreBackends.filter((backend) => backend.enabled))(
  'collection webhook under concurrent deliveries on $name',
  (backend) => {
    async function start() {
      const store = await backend.create();
      const app = await startApp({ STORE_URL: store.storeUrl });
      const code = async (body: unknown, headers?: Record<string, string>) =>
        (await app.deliver(body, headers)).reply.responseCode as string;
      return { ...app, store, code };
    }

    it('answers each delivery for itself: new, already stored, one settlementId twice, invalid, badly signed', async () => {
      const { code, store, baseUrl } = await start();
      const stored = notificationBody();
      expect(await code(stored)).toBe('00');

      const twice = notificationBody();
      const fresh = Array.from({ length: 20 }, () => notificationBody());
      const [again, first, second, invalid, unsigned, ...others] = await Promise.all([
        code({ ...stored, sessionId: 'retry-session' }),
        code(twice),
        code({ ...twice, sessionId: 'second-copy' }),
        code(notificationBody({ accountNumber: '012345678' })),
        code(notificationBody(), signedHeaders(sandboxCredentials.webhookClientId, 'not-the-secret')),
        ...fresh.map((body) => code(body)),
      ]);

      expect(again).toBe('01');
      expect([first, second].sort()).toEqual(['00', '01']);
      expect(invalid).toBe('02');
      expect(unsigned).toBe('02');
      expect(others).toEqual(fresh.map(() => '00'));
      expect(await store.countRows()).toBe(1 + 1 + fresh.length);

      // Operators see how many notifications each commit carried.
      const metrics = await (await request(`${baseUrl}/metrics`)).body.text();
      expect(metrics).toContain('# TYPE collection_store_batch_size histogram');
      const committed = Number(/^collection_store_batch_size_sum\{outcome="committed"\} (\d+)/m.exec(metrics)?.[1]);
      const rolledBack = Number(/^collection_store_batch_size_sum\{outcome="rolled-back"\} (\d+)/m.exec(metrics)?.[1] ?? 0);
      // The retry of `stored` is answered from what the store remembers, in no transaction; so is the
      // second copy of `twice` when it arrives a turn after the first was committed.
      expect(committed + rolledBack).toBeGreaterThanOrEqual(1 + 1 + fresh.length);
      expect(committed + rolledBack).toBeLessThanOrEqual(1 + 2 + fresh.length);
    });

    it("answers 01 to the bank's retry of a transfer it stored without asking the database, even while it cannot write", async () => {
      const { code, store } = await start();
      const stored = notificationBody();
      expect(await code(stored)).toBe('00');
      await store.breakInserts();
      expect(await code({ ...stored, sessionId: 'the-retry' })).toBe('01');
      expect(await code(notificationBody())).toBe('03');
      expect(await store.countRows()).toBe(1);
    });

    it('answers 03 to every delivery of a batch whose commit fails, stores nothing, and 00 to the retries', async () => {
      const { code, store } = await start();
      const bodies = Array.from({ length: 10 }, () => notificationBody());
      await store.breakInserts();
      expect(await Promise.all(bodies.map((body) => code(body)))).toEqual(bodies.map(() => '03'));
      expect(await store.countRows()).toBe(0);

      await store.repairInserts();
      expect(await Promise.all(bodies.map((body) => code(body)))).toEqual(bodies.map(() => '00'));
      expect(await store.countRows()).toBe(bodies.length);
    });

    it('refuses with 02 a delivery the store refuses on its own (no retry could store it), and stores its batch-mates with 00', async () => {
      const { code, store } = await start();
      const poison = notificationBody({ settlementId: `9${Date.now()}` });
      await store.refuseRow(poison.settlementId);
      const good = Array.from({ length: 30 }, () => notificationBody());
      // Sent together, so the refused row shares its statement with good ones.
      const [refused, ...others] = await Promise.all([poison, ...good].map((body) => code(body)));
      expect(refused).toBe('02');
      expect(others).toEqual(good.map(() => '00'));
      expect(await store.countRows()).toBe(good.length);
    });

    it('refuses with 02 a delivery the store could never hold, and stores its batch-mates with 00', async () => {
      const { code, store } = await start();
      const good = Array.from({ length: 30 }, () => notificationBody());
      const [tooLong, tooLarge, ...others] = await Promise.all([
        code(notificationBody({ settlementId: 'S'.repeat(6_000) })),
        code(notificationBody({ transactionAmount: '1'.repeat(60_000) })),
        ...good.map((body) => code(body)),
      ]);
      expect([tooLong, tooLarge]).toEqual(['02', '02']);
      expect(others).toEqual(good.map(() => '00'));
      expect(await store.countRows()).toBe(good.length);
    });
  },
);
