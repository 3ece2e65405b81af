/**
 * What waits for the bank is the store's: a restart, or a kill -9 with asks in flight, loses no
 * pending confirmation. The next start (or any replica) takes each up once it is due.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { collectionHeaders } from '../scripts/collection-notifier.ts';
import { Secret } from '../src/secret.ts';
import { SHUTDOWN_DEADLINES } from '../src/shutdown.ts';
import { notificationBody, startApp } from './helpers/app.ts';
import { createTestClients, urlsAt } from './helpers/bank-clients.ts';
import { confirmationOf, idsOf, startConfirmingApp, subscribe, transferOf } from './helpers/confirming.ts';
import { liveBankEnv } from './helpers/counting-bank.ts';
import { startFakeCollectionBank } from './helpers/fake-collection-bank.ts';
import { startSubgraphProcess } from './helpers/process.ts';
import { tempSqlitePath, urlStoreBackends } from './helpers/stores.ts';
import { waitFor } from './helpers/wait.ts';

describe.each(urlStoreBackends.filter((backend) => backend.enabled))('pending confirmations across a restart on $name', (backend) => {
  it('confirms after a restart what the bank could not answer before it, and streams it then', async () => {
    const { storeUrl } = await backend.create();
    const bank = await startFakeCollectionBank();
    bank.answerEvery({ status: 503 });
    const before = await startConfirmingApp(bank, { STORE_URL: storeUrl });
    const bodies = Array.from({ length: 3 }, () => notificationBody());
    for (const body of bodies) {
      bank.know(transferOf(body));
      expect((await before.deliver(body)).reply.responseCode).toBe('00');
    }
    await waitFor(() => (bank.calls('verifyBySettlementId') > 0 ? true : undefined));
    await before.app.close();

    bank.answerEvery();
    const after = await startConfirmingApp(bank, { STORE_URL: storeUrl });
    const confirmed = await subscribe(after, { confirmed: true }, 1);
    for (const body of bodies) await confirmationOf(after, body.settlementId, 'CONFIRMED');
    await confirmed.atLeast(3);
    // In the order the bank's answers were recorded: each once.
    expect(idsOf(confirmed).sort()).toEqual(bodies.map((body) => body.settlementId).sort());
  });
});

describe('pending confirmations across a SIGTERM', () => {
  it('drains within the budget while the bank holds its answer, exits 0, and leaves the notification to be confirmed after', async () => {
    const path = tempSqlitePath();
    const pair = { clientId: 'count-collection', clientSecret: 'count-webhook-secret' };
    const bank = await startFakeCollectionBank(pair);
    bank.answerEvery({ after: new Promise<never>(() => undefined), answer: 'known' });
    const subgraph = await startSubgraphProcess({
      ...liveBankEnv(bank.url),
      COLLECTION_CONFIRMATION: 'on',
      BANK_COLLECTION_URL: bank.url,
      // The default 10 s: the call the bank holds is cut at the close, never waited for.
      STORE_URL: `sqlite:${path}`,
    });
    const body = notificationBody();
    bank.know(transferOf(body));
    const response = await request(`${subgraph.baseUrl}/webhooks/collection`, {
      method: 'POST',
      headers: collectionHeaders(pair.clientId, pair.clientSecret),
      body: JSON.stringify(body),
    });
    expect(((await response.body.json()) as { responseCode: string }).responseCode).toBe('00');
    await bank.received.first((r) => r.operation === 'verifyBySettlementId');

    const signalled = performance.now();
    subgraph.child.kill('SIGTERM');
    expect(await subgraph.exited).toEqual({ code: 0, signal: null });
    expect(performance.now() - signalled).toBeLessThan(SHUTDOWN_DEADLINES.exitMs);
    expect(subgraph.logs.at(-1)).toMatchObject({ msg: 'drained, exiting' });
    // Asked once, and nothing taken up after the signal.
    expect(bank.calls('verifyBySettlementId')).toBe(1);

    bank.answerEvery();
    const { clients } = createTestClients(urlsAt(bank.url), {
      collectionCredentials: { clientId: pair.clientId, clientSecret: new Secret(pair.clientSecret) },
    });
    const next = await startApp({ STORE_URL: `sqlite:${path}` }, { bank: clients });
    await confirmationOf(next, body.settlementId, 'CONFIRMED', 20_000);
  }, 40_000);
});

describe('pending confirmations across a kill -9', () => {
  it('takes up, once their lease is over, the notifications a killed process was asking the bank about', async () => {
    const path = tempSqlitePath();
    const pair = { clientId: 'count-collection', clientSecret: 'count-webhook-secret' };
    const bank = await startFakeCollectionBank(pair);
    const never = new Promise<never>(() => undefined);
    bank.answerEvery({ after: never, answer: 'known' });
    // A live deployment on the fake: its asks time out after 1 s, so a claim's lease is 3 s.
    const first = await startSubgraphProcess({
      ...liveBankEnv(bank.url),
      COLLECTION_CONFIRMATION: 'on',
      BANK_COLLECTION_URL: bank.url,
      BANK_TIMEOUT_MS: '1000',
      STORE_URL: `sqlite:${path}`,
    });
    const bodies = Array.from({ length: 3 }, () => notificationBody());
    for (const body of bodies) {
      bank.know(transferOf(body));
      const response = await request(`${first.baseUrl}/webhooks/collection`, {
        method: 'POST',
        headers: collectionHeaders(pair.clientId, pair.clientSecret),
        body: JSON.stringify(body),
      });
      expect(((await response.body.json()) as { responseCode: string }).responseCode).toBe('00');
    }
    // Killed while it waits for the bank's answer.
    await bank.received.first((r) => r.operation === 'verifyBySettlementId');
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    bank.answerEvery();
    const { clients } = createTestClients(urlsAt(bank.url), {
      collectionCredentials: { clientId: pair.clientId, clientSecret: new Secret(pair.clientSecret) },
    });
    const next = await startApp({ STORE_URL: `sqlite:${path}` }, { bank: clients });
    for (const body of bodies) await confirmationOf(next, body.settlementId, 'CONFIRMED', 20_000);
  }, 40_000);
});
