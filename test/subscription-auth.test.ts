import { once } from 'node:events';
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { startCallbackRouter, subscribeViaCallback } from './helpers/callback-router.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { listenOnLoopback } from './helpers/loopback.ts';
import { scrape, subscribersLive } from './helpers/metrics.ts';
import { PRODUCTION_SANDBOX, productionHeaders } from './helpers/production.ts';
import { bearer, serveJwks, TEST_ISSUER, TestIssuer } from './helpers/tokens.ts';
import { waitFor } from './helpers/wait.ts';

const SUBSCRIPTION = 'subscription($after: String) { incomingTransfer(after: $after) { settlementId accountNumber cursor } }';
const OWN = '0123456789';

async function startGuarded(env: Record<string, string> = {}): Promise<{ app: TestApp; issuer: TestIssuer }> {
  const issuer = await TestIssuer.create();
  const jwks = await serveJwks(issuer);
  return { app: await startApp({ AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, ...env }), issuer };
}

/** The close code of the client's socket, once it closes. */
function closeCode(client: ReturnType<TestApp['wsClient']>): Promise<number> {
  const closed = Promise.withResolvers<number>();
  client.on('closed', (event) => closed.resolve((event as { code: number }).code));
  return closed.promise;
}

describe('subscriptions over graphql-ws with tokens', () => {
  it('takes the token from connectionParams or the upgrade request, and refuses a connection without one field by field', async () => {
    const { app, issuer } = await startGuarded();
    const token = await issuer.sign({ scope: 'collections:read', accounts: [OWN] });
    const viaParams = app.wsClient({ connectionParams: { Authorization: `Bearer ${token}` } }).iterate({ query: SUBSCRIPTION });
    const viaHeader = app.wsClient({ headers: bearer(token) }).iterate({ query: SUBSCRIPTION });
    const anonymous = app.wsClient().iterate({ query: SUBSCRIPTION });
    // graphql-ws sends a refused subscription's result as its one event.
    expect((await anonymous.next()).value.errors).toEqual([expect.objectContaining({ path: ['incomingTransfer'], extensions: { code: 'UNAUTHENTICATED' } })]);

    const [params, header] = [viaParams.next(), viaHeader.next()];
    await subscribersLive(app, 2);
    const body = notificationBody({ accountNumber: OWN });
    await app.deliver(body);
    expect((await params).value.data.incomingTransfer.settlementId).toBe(body.settlementId);
    expect((await header).value.data.incomingTransfer.settlementId).toBe(body.settlementId);
  });

  it('closes the socket with 4401 when the token expires; the client resumes with a fresh token and after, missing nothing', async () => {
    const { app, issuer } = await startGuarded();
    const first = app.wsClient({ connectionParams: { Authorization: `Bearer ${await issuer.sign({ scope: 'collections:read', accounts: [OWN], expiresIn: 2 })}` } });
    const closed = closeCode(first);
    const events = first.iterate({ query: SUBSCRIPTION });
    const received = events.next();
    await subscribersLive(app, 1);
    const before = notificationBody({ accountNumber: OWN });
    await app.deliver(before);
    const { cursor } = (await received).value.data.incomingTransfer;

    expect(await closed).toBe(4401);
    expect(await scrape(app, 'graphql_authorization_refusals_total{reason="expired"}')).toBe(1);
    const missed = notificationBody({ accountNumber: OWN });
    await app.deliver(missed);

    const resumed = app
      .wsClient({ connectionParams: { Authorization: `Bearer ${await issuer.sign({ scope: 'collections:read', accounts: [OWN] })}` } })
      .iterate({ query: SUBSCRIPTION, variables: { after: cursor } });
    expect((await resumed.next()).value.data.incomingTransfer.settlementId).toBe(missed.settlementId);
  });

  it('shares an execution only between callers who may see the same accounts', async () => {
    const { app, issuer } = await startGuarded();
    const subscriber = async (accounts: string[]) =>
      app.wsClient({ connectionParams: { Authorization: `Bearer ${await issuer.sign({ scope: 'collections:read', accounts })}` } }).iterate({ query: SUBSCRIPTION });
    const [own, same, other] = [await subscriber([OWN]), await subscriber([OWN]), await subscriber(['2233445566'])];
    const [ownNext, sameNext, otherNext] = [own.next(), same.next(), other.next()];
    await subscribersLive(app, 3);
    const theirs = notificationBody({ accountNumber: '2233445566' });
    const ours = notificationBody({ accountNumber: OWN });
    await app.deliver(theirs);
    await app.deliver(ours);
    expect((await ownNext).value.data.incomingTransfer.settlementId).toBe(ours.settlementId);
    expect((await sameNext).value.data.incomingTransfer.settlementId).toBe(ours.settlementId);
    expect((await otherNext).value.data.incomingTransfer.settlementId).toBe(theirs.settlementId);
    // One execution for the two callers of the same accounts, one for the other: two results in all.
    expect(await scrape(app, 'graphql_subscription_executions_total{execution="shared"}')).toBe(2);
  });
});

describe('per-connection limits', () => {
  it('refuses the 101st operation on one connection with a clear error; the first 100 go on', async () => {
    const app = await startApp();
    const client = app.wsClient();
    const iterators = Array.from({ length: 100 }, () => client.iterate({ query: SUBSCRIPTION }));
    const pending = iterators.map((iterator) => iterator.next());
    await subscribersLive(app, 100);
    const refused = client.iterate({ query: SUBSCRIPTION });
    await expect(refused.next()).rejects.toEqual([expect.objectContaining({ message: expect.stringContaining('already holds 100 operations') })]);
    const body = notificationBody();
    await app.deliver(body);
    expect((await pending[99])!.value.data.incomingTransfer.settlementId).toBe(body.settlementId);
  });

  it('closes a socket with 1009 on a message over 1 MiB', async () => {
    const app = await startApp();
    const socket = new WebSocket(app.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
    onCleanup(() => socket.terminate());
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'connection_init' }));
    await once(socket, 'message');
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `{ banks { code } } # ${'x'.repeat(1024 * 1024)}` } }));
    const [code] = (await once(socket, 'close')) as [number];
    expect(code).toBe(1009);
  });
});

describe("the router's callback protocol", () => {
  it('calls back only URLs under SUBSCRIPTION_CALLBACK_URLS, refusing any other before sending it anything', async () => {
    const router = await startCallbackRouter();
    const base = new URL(router.callbackUrl);
    const app = await startApp({ SUBSCRIPTION_CALLBACK_URLS: `${base.origin}/callback` });
    for (const url of [
      `${base.origin}/callbackevil/1`,
      `${base.origin}/callback/../admin`,
      `${base.origin}/%2e%2e/admin`,
      `http://user@${base.host}/callback/1`,
      `http://localhost:${base.port}/callback/1`,
      'file:///etc/passwd',
    ]) {
      const refused = await subscribeViaCallback(app, url, SUBSCRIPTION);
      expect(refused.status, url).toBe(400);
      expect((refused.body.errors as { message: string }[])[0]!.message).toContain('SUBSCRIPTION_CALLBACK_URLS');
    }
    expect(router.messages).toEqual([]);
    expect(await scrape(app, 'graphql_authorization_refusals_total{reason="callback_url_refused"}')).toBe(6);

    const allowed = await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION);
    expect(allowed.status).toBe(200);
    expect((await router.nth('check')).id).toBe(allowed.subscriptionId);
  });

  it('is off in production unless SUBSCRIPTION_CALLBACK_URLS is set', async () => {
    const router = await startCallbackRouter();
    const app = await startApp(PRODUCTION_SANDBOX, {}, { headers: await productionHeaders() });
    const refused = await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION, {}, await productionHeaders());
    expect(refused.status).toBe(400);
    expect((refused.body.errors as { message: string }[])[0]!.message).toContain('does not serve the subscription callback protocol');
    expect(router.messages).toEqual([]);
  });

  it('completes with UNAUTHENTICATED when the token expires', async () => {
    const router = await startCallbackRouter();
    const { app, issuer } = await startGuarded();
    const token = await issuer.sign({ scope: 'collections:read', accounts: [OWN], expiresIn: 2 });
    const { status } = await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION, {}, bearer(token));
    expect(status).toBe(200);
    const complete = await router.nth('complete');
    expect(complete.errors).toEqual([expect.objectContaining({ extensions: { code: 'UNAUTHENTICATED' } })]);
    await waitFor(async () => ((await scrape(app, 'graphql_active_subscriptions')) === 0 ? true : undefined));
  });

  it('sends nothing for a subscription it refuses: no token, no scope, another account, a bad argument', async () => {
    const router = await startCallbackRouter();
    const { app, issuer } = await startGuarded();
    const token = (scope: string) => issuer.sign({ scope, accounts: [OWN] });
    const refusals = [
      { headers: {}, variables: {}, code: 'UNAUTHENTICATED' },
      { headers: bearer(await token('accounts:read')), variables: {}, code: 'UNAUTHORIZED_FIELD_OR_TYPE' },
      { headers: bearer(await token('collections:read')), variables: { account: '2233445566' }, code: 'FORBIDDEN' },
      { headers: bearer(await token('collections:read')), variables: { account: '123' }, code: 'BAD_USER_INPUT' },
    ];
    const query = 'subscription($account: String) { incomingTransfer(accountNumber: $account) { settlementId } }';
    for (const { headers, variables, code } of refusals) {
      // With heartbeats asked for: none may go out on its behalf either.
      const refused = await subscribeViaCallback(app, router.callbackUrl, query, variables, headers, { heartbeatIntervalMs: 1_000 });
      expect(refused.status, code).toBe(200);
      expect(refused.body.errors, code).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code }) })]);
    }
    // One authorized subscription after them: its check is the first message the router sees.
    const allowed = await subscribeViaCallback(app, router.callbackUrl, query, { account: OWN }, bearer(await token('collections:read')));
    expect(allowed.status).toBe(200);
    expect(await router.nth('check')).toMatchObject({ id: allowed.subscriptionId });
    expect(router.messages.map((m) => [m.action, m.id])).toEqual([['check', allowed.subscriptionId]]);
  });

  it('refuses a heartbeat interval under 1 s (0 turns heartbeats off) before any request', async () => {
    const router = await startCallbackRouter();
    const app = await startApp();
    for (const heartbeatIntervalMs of [20, 999, -5, 1.5, '5000']) {
      const refused = await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION, {}, {}, { heartbeatIntervalMs });
      expect(refused.status, String(heartbeatIntervalMs)).toBe(400);
      expect(refused.body.errors, String(heartbeatIntervalMs)).toEqual([
        expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', argumentName: 'heartbeatIntervalMs' }) }),
      ]);
    }
    expect(router.messages).toEqual([]);
    for (const heartbeatIntervalMs of [0, 1_000]) {
      const allowed = await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION, {}, {}, { heartbeatIntervalMs });
      expect(allowed.status).toBe(200);
      expect((await router.nth('check', heartbeatIntervalMs === 0 ? 1 : 2)).id).toBe(allowed.subscriptionId);
    }
  });

  it('never follows a redirect from the callback URL', async () => {
    const target = await startCallbackRouter();
    let redirected = 0;
    const redirector = createServer((_request, response) => {
      redirected += 1;
      response.writeHead(307, { location: target.callbackUrl }).end();
    });
    const origin = await listenOnLoopback(redirector);
    const app = await startApp();
    const { status, body } = await subscribeViaCallback(app, `${origin}/callback/1`, SUBSCRIPTION);
    expect(status).toBe(500);
    expect(body.errors).toEqual([expect.objectContaining({ message: expect.stringContaining('307') })]);
    expect(redirected).toBe(1);
    expect(target.messages).toEqual([]);
  });
});
