import { describe, expect, it } from 'vitest';
import { notificationBody, startApp } from './helpers/app.ts';
import { startCallbackRouter as startRouter, subscribeViaCallback } from './helpers/callback-router.ts';
import { captureLogs } from './helpers/logs.ts';
import { subscribersLive } from './helpers/metrics.ts';
import { newNotification } from './helpers/notifications.ts';
import { withMethod } from './helpers/proxy.ts';
import { openMemoryStore } from './helpers/stores.ts';

const SUBSCRIPTION =
  'subscription($account: String) { incomingTransfer(accountNumber: $account) { settlementId accountNumber transactionAmount } }';

describe("incomingTransfer over the router's HTTP callback protocol", () => {
  it('checks the callback, sends each stored notification as next, and completes when the app closes', async () => {
    const router = await startRouter();
    const app = await startApp();
    const { status, body, subscriptionId, verifier } = await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION);
    expect(status).toBe(200);
    expect(body).toEqual({ data: null });

    const check = await router.nth('check');
    expect(check).toMatchObject({ kind: 'subscription', action: 'check', id: subscriptionId, verifier });
    expect(check.headers['subscription-protocol']).toBe('callback/1.0');

    await subscribersLive(app, 1);
    const notification = notificationBody({ transactionAmount: '2500.50' });
    expect((await app.deliver(notification)).reply.responseCode).toBe('00');
    const next = await router.nth('next');
    expect(next).toMatchObject({ kind: 'subscription', action: 'next', id: subscriptionId, verifier });
    expect(next.payload).toEqual({
      data: { incomingTransfer: { settlementId: notification.settlementId, accountNumber: '0123456789', transactionAmount: '2500.50' } },
    });

    const closed = app.app.close();
    const complete = await router.nth('complete');
    expect(complete).toMatchObject({ kind: 'subscription', action: 'complete', id: subscriptionId, verifier });
    expect(complete.errors).toBeUndefined();
    await closed;
    expect(router.messages.map((m) => m.action)).toEqual(['check', 'next', 'complete']);
  });

  it('closes within its budget when a router never answers complete, saying so, so the process can still exit 0', async () => {
    const router = await startRouter((message) => (message.action === 'complete' ? 'hang' : message.action === 'check' ? 200 : 204));
    const logs = captureLogs('info');
    const app = await startApp({}, { logger: logs.logger });
    expect((await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION)).status).toBe(200);
    await subscribersLive(app, 1);

    const started = performance.now();
    await app.app.close();
    // CALLBACK_DRAIN_MS (2 s) after the routes closed; without the bound, the 10 s of the request's own time-out and more.
    expect(performance.now() - started).toBeLessThan(6_000);
    expect((await router.nth('complete')).action).toBe('complete');
    expect(logs.logs.map((entry) => entry.msg)).toContain(
      'a router did not take `complete` for its callback subscriptions in time; it sees their end when their heartbeats stop',
    );
  });

  it('sends only the notifications of the subscribed account', async () => {
    const router = await startRouter();
    const app = await startApp();
    await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION, { account: '2233445566' });
    await subscribersLive(app, 1);
    const other = notificationBody({ accountNumber: '0123456789' });
    const own = notificationBody({ accountNumber: '2233445566' });
    await app.deliver(other);
    await app.deliver(own);
    const next = await router.nth('next');
    expect(next.payload?.data.incomingTransfer.settlementId).toBe(own.settlementId);
    expect(router.messages.filter((m) => m.action === 'next')).toHaveLength(1);
  });

  it('refuses with BAD_USER_INPUT an account number that is not 10 digits, sending nothing', async () => {
    const router = await startRouter();
    const app = await startApp();
    const { body } = await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION, { account: '12345' });
    expect((body.errors as { extensions: { code: string } }[])[0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(router.messages).toEqual([]);
  });

  it('completes with a bare INTERNAL_SERVER_ERROR when the stream fails, none of its message', async () => {
    // Two stored before the app starts, so resuming after the first needs a replay query, which fails.
    const store = await openMemoryStore();
    const [first] = [await store.insert(newNotification()), await store.insert(newNotification())];
    const broken = withMethod(store, 'listAfter', async () => {
      throw new Error('connect ECONNREFUSED postgres://app:hunter2-pw@db.internal:5432/collections');
    });
    const router = await startRouter();
    const app = await startApp({}, { store: broken });
    const settlementId = first.status === 'inserted' ? first.notification.settlementId : '';
    const { data } = await app.query(`{ collectionNotification(settlementId: "${settlementId}") { cursor } }`);

    await subscribeViaCallback(
      app,
      router.callbackUrl,
      'subscription($after: String) { incomingTransfer(after: $after) { settlementId } }',
      {
        after: data!.collectionNotification.cursor,
      },
    );
    const complete = await router.nth('complete');
    const text = JSON.stringify(complete);
    for (const part of ['hunter2', 'db.internal', 'postgres', 'ECONNREFUSED']) expect(text).not.toContain(part);
    expect(complete.errors).toEqual([
      expect.objectContaining({ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }),
    ]);
  });
});
