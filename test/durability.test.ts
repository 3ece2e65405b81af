import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { notificationBody, signedHeaders } from './helpers/app.ts';
import { startSubgraphProcess, type SubgraphProcess } from './helpers/process.ts';
import { urlStoreBackends } from './helpers/stores.ts';

async function deliver(process: SubgraphProcess, body: Record<string, unknown>): Promise<string> {
  const response = await request(`${process.baseUrl}/webhooks/collection`, {
    method: 'POST',
    headers: signedHeaders(),
    body: JSON.stringify(body),
  });
  return ((await response.body.json()) as { responseCode: string }).responseCode;
}

// `00` means we own the transfer: it must be on disk before the reply leaves, so a crash right
// after cannot lose it. Deliveries in flight share commits (group commit): a crash mid-batch may
// lose those not yet answered, never one that was answered 00; afterwards each is a duplicate (01)
// and served, whoever asks.
describe.each(urlStoreBackends.filter((backend) => backend.enabled))('durability of group commits on $name', (backend) => {
  it('loses no notification acknowledged with 00 when killed -9 with deliveries in flight', async () => {
    const store = await backend.create();
    const env = { STORE_URL: store.storeUrl };
    const first = await startSubgraphProcess(env);
    const acknowledged: Record<string, unknown>[] = [];
    let killed = false;
    // 40 senders, each delivering new notifications back to back, until the process is killed.
    const sender = async () => {
      while (!killed) {
        const body = notificationBody();
        const code = await deliver(first, body).catch(() => undefined);
        if (code === '00') acknowledged.push(body);
        else if (code !== undefined) throw new Error(`unexpected reply ${code}`);
        if (acknowledged.length >= 100 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 40 }, sender));
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startSubgraphProcess(env);
    const codes = await Promise.all(acknowledged.map((body) => deliver(second, body)));
    expect(codes).toEqual(acknowledged.map(() => '01'));
    expect(await store.countRows()).toBeGreaterThanOrEqual(acknowledged.length);
    const last = acknowledged.at(-1)!;
    const response = await request(`${second.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `{ collectionNotification(settlementId: "${last.settlementId as string}") { settlementId transactionAmount } }`,
      }),
    });
    expect(((await response.body.json()) as { data: unknown }).data).toEqual({
      collectionNotification: { settlementId: last.settlementId, transactionAmount: last.transactionAmount },
    });
    // Two process starts on a loaded machine: more than the default allowance, never a timing check.
  }, 60_000);
});
