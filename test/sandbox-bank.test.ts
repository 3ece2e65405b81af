import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { Secret } from '../src/secret.ts';
import { SANDBOX_PREFIXES } from '../src/sandbox/index.ts';
import { startApp, untilListed, type TestApp } from './helpers/app.ts';
import { createTestClients, sandboxCollectionCredentials, urlsAt } from './helpers/bank-clients.ts';
import { startLiveApp } from './helpers/counting-bank.ts';
import { startFakeBank } from './helpers/fake-bank.ts';
import { captureLogs } from './helpers/logs.ts';
import { PRODUCTION_SANDBOX } from './helpers/production.ts';
import { postJson } from './helpers/sandbox.ts';

/** What `GET /sandbox/bank` answers: its status, and the console it names. */
async function sandboxBank(baseUrl: string): Promise<{ status: number; console?: string }> {
  const response = await request(`${baseUrl}/sandbox/bank`);
  const text = await response.body.text();
  return { status: response.statusCode, console: response.statusCode === 200 ? JSON.parse(text).collectionConsole : undefined };
}

/** A transfer made on the console of `app`'s in-process sandbox bank. */
async function transfer(app: TestApp, order: Record<string, unknown>) {
  const { console } = await sandboxBank(app.baseUrl);
  const answer = await postJson(`${console}/transfers`, order);
  expect(answer.status).toBe(201);
  return answer.json;
}

const STORED = 'query ($id: ID!) { collectionNotification(settlementId: $id) { settlementId sessionId transactionAmount } }';

describe('the in-process sandbox bank and the subgraph', () => {
  it("tells where its console is, and delivers the console's transfers to the subgraph's webhook", async () => {
    const app = await startApp();
    const found = await sandboxBank(app.baseUrl);
    expect(found.status).toBe(200);
    expect(found.console).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/collection$/);
    const made = await transfer(app, { accountNumber: '0123456789', amount: '1500.00' });
    expect(made).toMatchObject({ delivered: true, webhook: { status: 200, reply: { responseCode: '00', sessionId: made.sessionId } } });
    const { data } = await app.query(STORED, { id: made.settlementId });
    expect(data?.collectionNotification).toEqual({
      settlementId: made.settlementId,
      sessionId: made.sessionId,
      transactionAmount: '1500.00',
    });
  });

  it('holds a lost transfer the subgraph never saw, and sends it through the webhook when asked to (op 17)', async () => {
    const app = await startApp();
    const lost = await transfer(app, { accountNumber: '1234567890', amount: '99999999999999.99', lost: true });
    expect((await app.query(STORED, { id: lost.settlementId })).data?.collectionNotification).toBeNull();

    const origin = new URL((await sandboxBank(app.baseUrl)).console!).origin;
    const urls = { ...urlsAt('http://127.0.0.1:9'), collection: origin + SANDBOX_PREFIXES.collection };
    const { clients } = createTestClients(urls, { collectionCredentials: sandboxCollectionCredentials });
    await expect(clients.collection.verifyBySettlementId(lost.settlementId)).resolves.toMatchObject({
      transactionAmount: '99999999999999.99',
      acknowledged: false,
    });
    await expect(clients.collection.repush({ settlementId: lost.settlementId })).resolves.toMatchObject({ queued: true });
    await untilListed(app, lost.settlementId);
    expect((await app.query(STORED, { id: lost.settlementId })).data?.collectionNotification).toMatchObject({
      transactionAmount: '99999999999999.99',
    });
    await expect(clients.collection.verifyBySettlementId(lost.settlementId)).resolves.toMatchObject({ acknowledged: true });
  });

  it('signs with, and checks ops 15 to 17 against, the webhook pair the subgraph is configured with', async () => {
    const app = await startApp({ WEBHOOK_CLIENT_ID: 'partner-7', WEBHOOK_CLIENT_SECRET: 'partner-7-webhook-secret' });
    const made = await transfer(app, { accountNumber: '0123456789', amount: '10.00' });
    expect(made.webhook.reply.responseCode).toBe('00');
    const origin = new URL((await sandboxBank(app.baseUrl)).console!).origin;
    const urls = { ...urlsAt('http://127.0.0.1:9'), collection: origin + SANDBOX_PREFIXES.collection };
    const partner = { clientId: 'partner-7', clientSecret: new Secret('partner-7-webhook-secret') };
    await expect(
      createTestClients(urls, { collectionCredentials: partner }).clients.collection.verifyBySessionId(made.sessionId),
    ).resolves.not.toBeNull();
    await expect(
      createTestClients(urls, { collectionCredentials: sandboxCollectionCredentials }).clients.collection.verifyBySessionId(made.sessionId),
    ).rejects.toMatchObject({ code: 'UPSTREAM_UNAUTHORIZED' });
  });

  it("delivers to the webhook's own port when WEBHOOK_PORT is set, and tells its console on both ports", async () => {
    const { logger, logged } = captureLogs();
    const app = await startApp({ WEBHOOK_PORT: '0' }, { logger });
    const { webhookUrl } = (await logged((entry) => typeof entry.webhookUrl === 'string')) as { webhookUrl: string };
    const webhookOrigin = webhookUrl.replace('localhost', '127.0.0.1');
    expect((await sandboxBank(webhookOrigin)).console).toBe((await sandboxBank(app.baseUrl)).console);
    const made = await transfer(app, { accountNumber: '0123456789', amount: '25.00' });
    expect(made.webhook).toMatchObject({ status: 200, reply: { responseCode: '00' } });
    expect((await app.query(STORED, { id: made.settlementId })).data?.collectionNotification).not.toBeNull();
  });

  it('serves no /sandbox/bank under the production rules, nor with a live bank', async () => {
    const production = await startApp(PRODUCTION_SANDBOX);
    expect((await sandboxBank(production.baseUrl)).status).toBe(404);
    const bank = await startFakeBank((_request, reply) => reply.status(404).json({}));
    const live = await startLiveApp(bank.url);
    expect((await sandboxBank(live.baseUrl)).status).toBe(404);
  });
});
