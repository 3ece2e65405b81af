import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { startCallbackRouter, subscribeViaCallback } from './helpers/callback-router.ts';
import { captureLogs } from './helpers/logs.ts';
import { listenOnLoopback } from './helpers/loopback.ts';
import { scrape, subscribersLive } from './helpers/metrics.ts';
import { bearer, serveJwks, TEST_ISSUER, TestIssuer } from './helpers/tokens.ts';
import { expire, waitFor } from './helpers/wait.ts';

// Every caller of the router's callback protocol is bounded: in how many subscriptions it holds,
// and in how long any request to its callback URL may take.

const SUBSCRIPTION = 'subscription { incomingTransfer { settlementId } }';
const OWN = '0123456789';

async function startGuarded(env: Record<string, string> = {}, logger?: ReturnType<typeof captureLogs>['logger']) {
  const issuer = await TestIssuer.create();
  const jwks = await serveJwks(issuer);
  const app = await startApp({ AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, ...env }, logger ? { logger } : {});
  const tokenOf = (subject: string, claims: { expiresIn?: number; scope?: string } = {}) =>
    issuer.sign({ scope: 'collections:read', accounts: [OWN], subject, ...claims }).then(bearer);
  return { app, tokenOf };
}

/** The callback subscriptions the app holds (`graphql_callback_subscriptions`), once it reads `count`. */
function held(app: TestApp, count: number, expireMs?: number): Promise<true> {
  return waitFor(async () => ((await scrape(app, 'graphql_callback_subscriptions')) === count ? true : undefined), expireMs);
}

describe('callback subscriptions per caller', () => {
  it("refuses a caller's 101st before any request is sent; another caller, and the caller once one ends, are served", async () => {
    const router = await startCallbackRouter();
    const { app, tokenOf } = await startGuarded();
    const ada = await tokenOf('ada');
    // Her last one ends with its token (accepted within the clock skew, ending 10 s from now: room for
    // what follows on a busy machine; the test waits for the end itself, not a time).
    for (let i = 0; i < 99; i += 1)
      expect((await subscribeViaCallback(app, `${router.callbackUrl}/${i}`, SUBSCRIPTION, {}, ada)).status).toBe(200);
    expect(
      (await subscribeViaCallback(app, `${router.callbackUrl}/99`, SUBSCRIPTION, {}, await tokenOf('ada', { expiresIn: -20 }))).status,
    ).toBe(200);
    await router.nth('check', 100);

    const refused = await subscribeViaCallback(app, `${router.callbackUrl}/100`, SUBSCRIPTION, {}, ada);
    expect(refused.status).toBe(429);
    expect(refused.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) })]);
    expect((refused.body.errors as { message: string }[])[0]!.message).toContain('already holds 100 callback subscriptions');
    expect(router.messages.filter((m) => m.action === 'check')).toHaveLength(100);
    expect(await scrape(app, 'graphql_callback_subscriptions')).toBe(100);

    const grace = await subscribeViaCallback(app, `${router.callbackUrl}/grace`, SUBSCRIPTION, {}, await tokenOf('grace'));
    expect(grace.status).toBe(200);
    await held(app, 101);

    await router.nth('complete');
    await held(app, 100);
    expect((await subscribeViaCallback(app, `${router.callbackUrl}/101`, SUBSCRIPTION, {}, ada)).status).toBe(200);
  }, 45_000);

  it('takes no place for a subscription it refuses: a caller refused 150 times still opens its own', async () => {
    const router = await startCallbackRouter();
    const { app, tokenOf } = await startGuarded();
    const unscoped = await tokenOf('ada', { scope: 'accounts:read' });
    for (let i = 0; i < 150; i += 1) {
      const { body } = await subscribeViaCallback(app, `${router.callbackUrl}/${i}`, SUBSCRIPTION, {}, unscoped);
      expect((body.errors as { extensions: { code: string } }[])[0]!.extensions.code).toBe('UNAUTHORIZED_FIELD_OR_TYPE');
    }
    expect(await scrape(app, 'graphql_callback_subscriptions')).toBe(0);
    expect(router.messages).toEqual([]);
    expect((await subscribeViaCallback(app, `${router.callbackUrl}/own`, SUBSCRIPTION, {}, await tokenOf('ada'))).status).toBe(200);
    await held(app, 1);
  });

  it('gives the place back however the subscription ends: a failed check, a router that forgets it, the end of its token', async () => {
    const { app, tokenOf } = await startGuarded();
    const token = await tokenOf('ada');

    const refusing = await startCallbackRouter((message) => (message.action === 'check' ? 500 : 204));
    const failed = await subscribeViaCallback(app, refusing.callbackUrl, SUBSCRIPTION, {}, token);
    expect(failed.status).toBe(400);
    expect(failed.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT', argumentName: 'callbackUrl' } })]);
    await held(app, 0);

    // A router that no longer knows the subscription answers its next 404: it ends there.
    const forgetting = await startCallbackRouter((message) => (message.action === 'next' ? 404 : message.action === 'check' ? 200 : 204));
    expect((await subscribeViaCallback(app, forgetting.callbackUrl, SUBSCRIPTION, {}, token)).status).toBe(200);
    const expiring = await startCallbackRouter();
    expect((await subscribeViaCallback(app, expiring.callbackUrl, SUBSCRIPTION, {}, await tokenOf('ada', { expiresIn: -20 }))).status).toBe(
      200,
    );
    await held(app, 2);
    await subscribersLive(app, 2);
    await app.deliver(notificationBody({ accountNumber: OWN }));
    await forgetting.nth('next');
    await held(app, 1);
    // Its token ends 10 s after it was signed.
    await expiring.nth('complete');
    await held(app, 0);
    await subscribersLive(app, 0);
  }, 45_000);

  it('counts every caller as one while authorization is off (the sandbox outside production)', async () => {
    const router = await startCallbackRouter();
    const app = await startApp();
    for (let i = 0; i < 100; i += 1) expect((await subscribeViaCallback(app, `${router.callbackUrl}/${i}`, SUBSCRIPTION)).status).toBe(200);
    const refused = await subscribeViaCallback(app, `${router.callbackUrl}/100`, SUBSCRIPTION, {}, { 'x-forwarded-for': '203.0.113.9' });
    expect(refused.status).toBe(429);
    expect(router.messages.filter((m) => m.action === 'check')).toHaveLength(100);
  });
});

describe('callback requests', () => {
  it('gives up on a callback URL that does not answer within 10 s: the subscription request is answered, a stuck next ends its subscription', async () => {
    const logs = captureLogs();
    // Posted straight to the webhook, unknown to the sandbox bank: confirmation, off here, would log it NOT_AT_BANK.
    const { app, tokenOf } = await startGuarded({ COLLECTION_CONFIRMATION: 'off' }, logs.logger);
    const token = await tokenOf('ada');
    // Accepts the connection and never answers.
    const silent = createServer(() => undefined);
    const stuckCheck = subscribeViaCallback(app, `${await listenOnLoopback(silent)}/callback/1`, SUBSCRIPTION, {}, token);
    const stuckNext = await startCallbackRouter((message) => (message.action === 'next' ? 'hang' : message.action === 'check' ? 200 : 204));
    expect((await subscribeViaCallback(app, stuckNext.callbackUrl, SUBSCRIPTION, {}, token)).status).toBe(200);
    await subscribersLive(app, 1);
    await app.deliver(notificationBody({ accountNumber: OWN }));
    const started = Date.now();

    const check = await expire(stuckCheck, 'the subscription request', 20_000);
    expect(check.status).toBe(400);
    expect(check.body.errors).toEqual([
      {
        message: 'callbackUrl: it did not answer the check within 10 s; the subscription was not started and nothing else was sent.',
        extensions: { code: 'BAD_USER_INPUT', argumentName: 'callbackUrl' },
      },
    ]);
    await held(app, 0, 20_000);
    await subscribersLive(app, 0);
    // Each after one time-out of 10 s (not retried past it), well before the 300 s of a bare request.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(stuckNext.messages.filter((m) => m.action === 'next')).toHaveLength(1);
    expect(logs.logs.filter((entry) => (entry.level as number) >= 50)).toEqual([]);
  }, 30_000);
});
