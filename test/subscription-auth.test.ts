import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { startCallbackRouter, subscribeViaCallback } from './helpers/callback-router.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { captureLogs } from './helpers/logs.ts';
import { listenOnLoopback } from './helpers/loopback.ts';
import { bankCalls, scrape, subscribersLive } from './helpers/metrics.ts';
import { PRODUCTION_SANDBOX, productionHeaders } from './helpers/production.ts';
import { bearer, serveJwks, TEST_ISSUER, TestIssuer } from './helpers/tokens.ts';
import { expire, waitFor } from './helpers/wait.ts';

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
    expect((await anonymous.next()).value.errors).toEqual([
      expect.objectContaining({ path: ['incomingTransfer'], extensions: { code: 'UNAUTHENTICATED' } }),
    ]);

    const [params, header] = [viaParams.next(), viaHeader.next()];
    await subscribersLive(app, 2);
    const body = notificationBody({ accountNumber: OWN });
    await app.deliver(body);
    expect((await params).value.data.incomingTransfer.settlementId).toBe(body.settlementId);
    expect((await header).value.data.incomingTransfer.settlementId).toBe(body.settlementId);
  });

  it('closes the socket with 4401 when the token expires; the client resumes with a fresh token and after, missing nothing', async () => {
    const { app, issuer } = await startGuarded();
    // Expired 20 s ago, within the 30 s of clock skew: accepted, and served 10 s more (its exp plus the
    // skew), room for what follows on a busy machine; the test waits for the end itself, not a time.
    const first = app.wsClient({
      connectionParams: { Authorization: `Bearer ${await issuer.sign({ scope: 'collections:read', accounts: [OWN], expiresIn: -20 })}` },
    });
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
  }, 45_000);

  it('shares an execution only between callers who may see the same accounts', async () => {
    const { app, issuer } = await startGuarded();
    const subscriber = async (accounts: string[]) =>
      app
        .wsClient({ connectionParams: { Authorization: `Bearer ${await issuer.sign({ scope: 'collections:read', accounts })}` } })
        .iterate({ query: SUBSCRIPTION });
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

describe("when a token's key leaves the issuer's JWKS", () => {
  /** An app reading the JWKS again every second, and a token of `issuer`'s current key. */
  async function startWatching() {
    const { app, issuer } = await startGuarded({ AUTH_JWKS_MAX_AGE_S: '1' });
    const compromised = issuer.kid;
    const token = await issuer.sign({ scope: 'collections:read kyc:read', accounts: [OWN] });
    await issuer.rotate();
    return { app, issuer, token, withdraw: () => issuer.withdraw(compromised) };
  }

  it('closes every socket the key signed with 4401 within AUTH_JWKS_MAX_AGE_S, and keeps the others', async () => {
    const { app, issuer, token, withdraw } = await startWatching();
    const signed = app.wsClient({ connectionParams: { Authorization: `Bearer ${token}` } });
    const closed = Promise.withResolvers<{ code: number; reason: string }>();
    signed.on('closed', (event) => closed.resolve(event as { code: number; reason: string }));
    const streaming = signed.iterate({ query: SUBSCRIPTION });
    const unaffected = app.wsClient({
      connectionParams: { Authorization: `Bearer ${await issuer.sign({ scope: 'collections:read', accounts: [OWN] })}` },
    });
    const other = unaffected.iterate({ query: SUBSCRIPTION });
    const [first, otherFirst] = [streaming.next(), other.next()];
    await subscribersLive(app, 2);
    const before = notificationBody({ accountNumber: OWN });
    await app.deliver(before);
    expect((await first).value.data.incomingTransfer.settlementId).toBe(before.settlementId);
    expect((await otherFirst).value.data.incomingTransfer.settlementId).toBe(before.settlementId);

    // No request comes in meanwhile: the open socket alone has the JWKS read again.
    withdraw();
    const { code, reason } = await expire(closed.promise, 'the 4401 close', 10_000);
    expect(code).toBe(4401);
    expect(reason).toContain('withdrawn');
    expect(await scrape(app, 'graphql_authorization_refusals_total{reason="unknown_key"}')).toBe(1);

    const after = notificationBody({ accountNumber: OWN });
    await app.deliver(after);
    expect((await other.next()).value.data.incomingTransfer.settlementId).toBe(after.settlementId);
    // Anything new with that token, on a new connection as on the old, is refused.
    const again = app.wsClient({ connectionParams: { Authorization: `Bearer ${token}` } }).iterate({ query: SUBSCRIPTION });
    expect((await again.next()).value.errors).toEqual([expect.objectContaining({ extensions: { code: 'UNAUTHENTICATED' } })]);
  });

  it('runs nothing the socket sends once its key is withdrawn, though the client has not read the 4401 yet', async () => {
    const { app, token, withdraw } = await startWatching();
    const socket = new WebSocket(app.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws', { headers: bearer(token) });
    onCleanup(() => socket.terminate());
    const replies: { id?: string; type: string }[] = [];
    socket.on('message', (data) => replies.push(JSON.parse(data.toString())));
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'connection_init' }));
    await waitFor(() => (replies.some((m) => m.type === 'connection_ack') ? true : undefined));

    // A client that has not read its socket since: the server's close waits in the kernel.
    const tcp = (socket as unknown as { _socket: Socket })._socket;
    tcp.pause();
    withdraw();
    await waitFor(
      async () => ((await scrape(app, 'graphql_authorization_refusals_total{reason="unknown_key"}')) === 1 ? true : undefined),
      10_000,
    );
    // A BVN look-up the token's scopes allow: were it run, the bank would be called.
    socket.send(JSON.stringify({ id: 'late', type: 'subscribe', payload: { query: '{ bvn(number: "22212345678") { firstName } }' } }));
    tcp.resume();
    const [code] = (await once(socket, 'close')) as [number];
    expect(code).toBe(4401);
    expect(await bankCalls(app)).toBe(0);
    expect(replies.filter((m) => m.id === 'late' && m.type === 'next')).toEqual([]);
  });

  it('completes a callback subscription with UNAUTHENTICATED within AUTH_JWKS_MAX_AGE_S', async () => {
    const router = await startCallbackRouter();
    const { app, token, withdraw } = await startWatching();
    const { status } = await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION, {}, bearer(token));
    expect(status).toBe(200);
    await router.nth('check');
    await subscribersLive(app, 1);

    withdraw();
    const complete = await expire(router.nth('complete'), 'the complete message', 10_000);
    expect(complete.errors).toEqual([expect.objectContaining({ extensions: { code: 'UNAUTHENTICATED' } })]);
    expect(complete.errors![0]!.message).toContain('withdrawn');
    await subscribersLive(app, 0);
    expect(await scrape(app, 'graphql_authorization_refusals_total{reason="unknown_key"}')).toBe(1);
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
    await expect(refused.next()).rejects.toEqual([
      expect.objectContaining({ message: expect.stringContaining('already holds 100 operations') }),
    ]);
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

  it('completes with UNAUTHENTICATED when the token expires, at its exp plus the clock skew', async () => {
    const router = await startCallbackRouter();
    const { app, issuer } = await startGuarded();
    // Expired 20 s ago, within the 30 s of clock skew: accepted, and served 10 s more (its exp plus the
    // skew), room for what follows on a busy machine; the test waits for the end itself, not a time.
    const token = await issuer.sign({ scope: 'collections:read', accounts: [OWN], expiresIn: -20 });
    const { status } = await subscribeViaCallback(app, router.callbackUrl, SUBSCRIPTION, {}, bearer(token));
    expect(status).toBe(200);
    await subscribersLive(app, 1);
    const served = notificationBody({ accountNumber: OWN });
    await app.deliver(served);
    expect((await router.nth('next')).payload?.data.incomingTransfer.settlementId).toBe(served.settlementId);
    const complete = await router.nth('complete');
    expect(router.messages.map((m) => m.action)).toEqual(['check', 'next', 'complete']);
    expect(complete.errors).toEqual([expect.objectContaining({ extensions: { code: 'UNAUTHENTICATED' } })]);
    await waitFor(async () => ((await scrape(app, 'graphql_active_subscriptions')) === 0 ? true : undefined));
  }, 45_000);

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

  it('never follows a redirect from the callback URL, and answers the subscription request with HTTP 400', async () => {
    const target = await startCallbackRouter();
    let redirected = 0;
    const redirector = createServer((_request, response) => {
      redirected += 1;
      response.writeHead(307, { location: target.callbackUrl }).end();
    });
    const origin = await listenOnLoopback(redirector);
    const logs = captureLogs('debug');
    const app = await startApp({}, { logger: logs.logger });
    const { status, body } = await subscribeViaCallback(app, `${origin}/callback/1`, SUBSCRIPTION);
    expect(status).toBe(400);
    expect(body.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT', argumentName: 'callbackUrl' } })]);
    expect((body.errors as { message: string }[])[0]!.message).toContain('redirect');
    expect(redirected).toBe(1);
    expect(target.messages).toEqual([]);
    expect(await scrape(app, 'graphql_callback_subscriptions')).toBe(0);
    expect(logs.logs.filter((entry) => (entry.level as number) >= 50 || JSON.stringify(entry).includes('"stack"'))).toEqual([]);
  });

  it('answers 400 with BAD_USER_INPUT when the callback URL refuses the check (404) or cannot be reached, starting nothing', async () => {
    const refusing = await startCallbackRouter((message) => (message.action === 'check' ? 404 : 204));
    const closed = createServer();
    const gone = await listenOnLoopback(closed);
    await new Promise((resolve) => closed.close(resolve));
    const logs = captureLogs('debug');
    const app = await startApp({}, { logger: logs.logger });

    const refused = await subscribeViaCallback(app, refusing.callbackUrl, SUBSCRIPTION);
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      {
        message: 'callbackUrl: it answered the check with HTTP 404; the subscription was not started and nothing else was sent.',
        extensions: { code: 'BAD_USER_INPUT', argumentName: 'callbackUrl' },
      },
    ]);
    const unreachable = await subscribeViaCallback(app, `${gone}/callback/1`, SUBSCRIPTION);
    expect(unreachable.status).toBe(400);
    expect(unreachable.body.errors).toEqual([
      {
        message: 'callbackUrl: it could not be reached; the subscription was not started and nothing else was sent.',
        extensions: { code: 'BAD_USER_INPUT', argumentName: 'callbackUrl' },
      },
    ]);
    // No place held, and nothing sent after the refused check, a stored notification included.
    expect(await scrape(app, 'graphql_callback_subscriptions')).toBe(0);
    expect((await app.deliver(notificationBody())).reply.responseCode).toBe('00');
    // Handed to this replica's subscribers once its log has read it.
    await waitFor(async () => (((await scrape(app, 'collection_log_position')) ?? 0) >= 1 ? true : undefined));
    expect(refusing.messages.map((message) => message.action)).toEqual(['check']);
    expect(logs.logs.filter((entry) => (entry.level as number) >= 50 || JSON.stringify(entry).includes('"stack"'))).toEqual([]);
  }, 30_000);
});
