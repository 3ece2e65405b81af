/**
 * The metrics the alert rules in ops/ need beyond the request counters: a bank area's breaker
 * state, readiness as of the scrape, and subscriptions ended early. Each read from /metrics over HTTP.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { createLogger } from '../src/logger.ts';
import { createMetrics } from '../src/metrics.ts';
import { createPubSub } from '../src/pubsub/index.ts';
import type { PubSub } from '../src/pubsub/types.ts';
import { createNotificationStore } from '../src/store/index.ts';
import { createBankClients } from '../src/upstream/index.ts';
import { defaultBreakerOptions } from '../src/upstream/resilience.ts';
import { notificationBody, startApp } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { startFakeBank } from './helpers/fake-bank.ts';
import { scrape, subscribersLive } from './helpers/metrics.ts';
import { LOOPBACK_SOURCES, TEST_AUTH } from './helpers/production.ts';
import { withMethod } from './helpers/proxy.ts';
import { Inbox, waitFor } from './helpers/wait.ts';

const logger = createLogger('silent');

const LIVE_CREDENTIALS = {
  BANK_API_TOKEN: 'alerts-api-token',
  BANK_USERNAME: 'alerts-user',
  BANK_PASSWORD: 'alerts-password',
  BILLING_USERNAME: 'alerts-billing',
  BILLING_PASSWORD: 'alerts-billing-password',
  POSTING_USERNAME: 'alerts-posting',
  POSTING_PASSWORD: 'alerts-posting-password',
  OAUTH_CLIENT_ID: 'alerts-oauth-client',
  OAUTH_CLIENT_SECRET: 'alerts-oauth-secret',
  WEBHOOK_CLIENT_ID: 'alerts-collection',
  WEBHOOK_CLIENT_SECRET: 'alerts-webhook-secret',
};

describe('bank_circuit_open', () => {
  it('is 1 for the area whose breaker opened, 0 while it is closed', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(502).text('Bad Gateway'));
    const urls = {
      BANK_BASE_URL: bank.url,
      BANK_GATEWAY_URL: bank.url,
      BANK_BILLING_URL: bank.url,
      BANK_POSTING_URL: bank.url,
      BANK_WALLET_URL: bank.url,
      COLLECTION_CONFIRMATION: 'off',
    };
    const app = await startApp({ UPSTREAM_MODE: 'live', ...urls, ...LIVE_CREDENTIALS, ...LOOPBACK_SOURCES, ...TEST_AUTH });

    await app.query('{ banks { code } }');
    expect(await scrape(app, 'bank_circuit_open{area="account"}')).toBe(0);
    // The default breaker opens after 20 calls in its window, more than half of them unreachable.
    for (let i = 0; i < 19; i += 1) await app.query('{ banks { code } }');
    expect(await scrape(app, 'bank_circuit_open{area="account"}')).toBe(1);
    expect(await scrape(app, 'bank_circuit_open{area="billing"}')).toBeUndefined();
  });

  it(
    'is 0.5 while half-open and 0 once a trial call succeeds',
    async () => {
      let failing = true;
      const bank = await startFakeBank((_request, reply) => {
        if (failing) reply.status(503).text('');
        else reply.json([{ category_id: 1, list_order: '1', name: 'Airtime' }]);
      });
      const metrics = createMetrics();
      const clients = createBankClients({
        urls: { base: bank.url, gateway: bank.url, billing: bank.url, posting: bank.url, wallet: bank.url },
        credentials: loadConfig({}).upstream.credentials,
        collectionCredentials: loadConfig({}).webhook,
        timezone: 'Africa/Lagos',
        timeoutMs: 2_000,
        logger,
        metrics,
      });
      onCleanup(() => clients.close());
      const state = async () => (await metrics.bankCircuitOpen.get()).values.find((v) => v.labels.area === 'billing')?.value;

      // The production breaker: it opens on a window of failed calls, and tries one again after its reset time.
      for (let i = 0; i < defaultBreakerOptions.volumeThreshold; i += 1) await clients.billing.listCategories().catch(() => undefined);
      expect(await state()).toBe(1);
      await waitFor(async () => ((await state()) === 0.5 ? true : undefined), defaultBreakerOptions.resetTimeout + 15_000);
      failing = false;
      await expect(clients.billing.listCategories()).resolves.toHaveLength(1);
      expect(await state()).toBe(0);
    },
    defaultBreakerOptions.resetTimeout + 30_000,
  );
});

describe('bank_subgraph_ready', () => {
  it('is 1 at a scrape when the store and pub/sub answer', async () => {
    const app = await startApp();
    expect(await scrape(app, 'bank_subgraph_ready')).toBe(1);
  });

  it('is 0 at a scrape once the store stops answering, with no call to /health/ready in between', async () => {
    const store = await createNotificationStore('sqlite::memory:', { logger });
    onCleanup(() => store.close());
    let storeUp = true;
    const flaky = withMethod(store, 'ping', async () => (storeUp ? undefined : Promise.reject(new Error('connection lost'))));
    const app = await startApp({}, { store: flaky });
    expect(await scrape(app, 'bank_subgraph_ready')).toBe(1);
    storeUp = false;
    expect(await scrape(app, 'bank_subgraph_ready')).toBe(0);
  });
});

describe('collection_webhook_replies_total', () => {
  it('exports the accepted series as 0 before the first delivery, so that delivery counts as an increase', async () => {
    const app = await startApp();
    expect(await scrape(app, 'collection_webhook_replies_total{response_code="00",reason="accepted"}')).toBe(0);
  });
});

describe('graphql_subscriptions_ended_early_total', () => {
  it('stays 0 through a pub/sub interruption, which ends no subscription', async () => {
    // Counting a subscriber that fell behind is in src/collection/incoming-transfers.test.ts.
    const memory = await createPubSub('memory:', { logger, channelPrefix: 'test:' });
    onCleanup(() => memory.close());
    const listeners = new Set<() => void>();
    const pubsub: PubSub = withMethod(memory, 'onInterruption', (listener: () => void) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    });
    const app = await startApp({}, { pubsub });
    expect(await scrape(app, 'graphql_subscriptions_ended_early_total')).toBe(0);

    const received = new Inbox<string>();
    let completed = false;
    app.wsClient().subscribe<{ incomingTransfer: { settlementId: string } }>(
      { query: 'subscription { incomingTransfer { settlementId } }' },
      {
        next: (r) => r.data && received.push(r.data.incomingTransfer.settlementId),
        error: () => undefined,
        complete: () => (completed = true),
      },
    );
    await subscribersLive(app, 1);
    for (const listener of listeners) listener();
    const body = notificationBody();
    await app.deliver(body);
    await received.first((id) => id === body.settlementId);
    expect(completed).toBe(false);
    expect(await scrape(app, 'graphql_subscriptions_ended_early_total')).toBe(0);
  });
});
