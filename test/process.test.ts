import { Agent, request as httpRequest } from 'node:http';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { createClient } from 'graphql-ws';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';
import { SHUTDOWN_DEADLINES } from '../src/shutdown.ts';
import { createNotificationStore } from '../src/store/index.ts';
import { notificationBody, signedHeaders, startApp } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { beginRequest } from './helpers/drain.ts';
import { liveBankEnv, startCountingBank } from './helpers/counting-bank.ts';
import { subscribersLive } from './helpers/metrics.ts';
import { runSubgraphToFailure, startSubgraphProcess } from './helpers/process.ts';
import { unusedUrl } from './helpers/fake-bank.ts';
import { PRODUCTION_SANDBOX } from './helpers/production.ts';
import { holdCalls } from './helpers/proxy.ts';
import { serviceUrl } from './helpers/services.ts';
import { isolatedPostgresUrl, openMemoryStore, silent, tempSqlitePath } from './helpers/stores.ts';
import { waitFor } from './helpers/wait.ts';

function isJsonObject(line: string): boolean {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
}

function tempStoreUrl(): string {
  return `sqlite:${tempSqlitePath()}`;
}

/** Resolves true once a new TCP connection to `port` is refused (the listener is closed). */
function connectionRefused(port: number): Promise<true | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED' ? true : undefined));
  });
}

const LIVE_VARIABLES = [
  'BANK_BASE_URL',
  'BANK_BILLING_URL',
  'BANK_POSTING_URL',
  'BANK_WALLET_URL',
  'BANK_COLLECTION_URL',
  'BANK_API_TOKEN',
  'BANK_USERNAME',
  'BANK_PASSWORD',
  'BILLING_USERNAME',
  'BILLING_PASSWORD',
  'POSTING_USERNAME',
  'POSTING_PASSWORD',
  'OAUTH_CLIENT_ID',
  'OAUTH_CLIENT_SECRET',
  'WEBHOOK_CLIENT_ID',
  'WEBHOOK_CLIENT_SECRET',
  'WEBHOOK_ALLOWED_IPS',
];

describe('start-up', () => {
  it('logs first that the bank is the sandbox and which store and pub/sub, then where it listens, as JSON lines on a pipe', async () => {
    const storeUrl = tempStoreUrl();
    const subgraph = await startSubgraphProcess({ STORE_URL: storeUrl });
    // stdout is a pipe here, not a terminal: every line is JSON, none of pino-pretty's.
    expect(subgraph.output.length).toBeGreaterThan(0);
    expect(subgraph.output.filter((line) => !isJsonObject(line))).toEqual([]);
    const [first] = subgraph.logs;
    expect(first).toMatchObject({ bank: 'sandbox', store: storeUrl, pubsub: 'memory:', auth: 'off' });
    expect(String(first!.msg)).toMatch(/sandbox.*store: sqlite:.*pub\/sub: memory:.*authorization: OFF/);

    const listening = subgraph.logs.findIndex((line) => typeof line.url === 'string' && String(line.msg).includes('listening'));
    expect(listening).toBeGreaterThan(0);
    expect(listening).toBeLessThan(8);
    expect(subgraph.logs[listening]!.url).toBe(`${subgraph.baseUrl}/graphql`);
    expect((await request(`${subgraph.baseUrl}/health/ready`)).statusCode).toBe(200);
  });

  it('names PostgreSQL and Redis without their passwords', async (context) => {
    const databaseUrl = serviceUrl('DATABASE_URL');
    const redisUrl = serviceUrl('REDIS_URL');
    if (!databaseUrl || !redisUrl) return context.skip();
    const postgresUrl = await isolatedPostgresUrl(databaseUrl);
    // The test server trusts local connections, so the password is carried but not checked.
    const storeUrl = new URL(postgresUrl);
    storeUrl.password = 'pg-log-s3cret';
    const subgraph = await startSubgraphProcess({ STORE_URL: storeUrl.toString(), PUBSUB_URL: redisUrl });
    expect(subgraph.logs[0]).toMatchObject({
      bank: 'sandbox',
      store: expect.stringMatching(/^postgres:\/\/postgres:\*\*\*@/),
      pubsub: expect.stringMatching(/^redis:\/\//),
    });
    expect(subgraph.output.join('\n')).not.toContain('pg-log-s3cret');
  });
});

// Which settings are wrong, and how each is named, is for the configuration's unit tests (src/config);
// here, once, that `npm start` turns a bad configuration into one report and exit 1.
describe('configuration errors', () => {
  it('exits 1 before listening on UPSTREAM_MODE=live alone, naming every missing variable in one report and no secret it was given', async () => {
    const given = { BANK_PASSWORD: 's3cr3t-value', OAUTH_CLIENT_SECRET: 'oauth-s3cr3t' };
    const { code, output } = await runSubgraphToFailure({ UPSTREAM_MODE: 'live', ...given });
    expect(code).toBe(1);
    expect(output).not.toContain('listening');
    const missing = LIVE_VARIABLES.filter((name) => !(name in given) && !new RegExp(`\\b${name}\\b`).test(output));
    expect(missing).toEqual([]);
    expect(output).not.toMatch(/\bBANK_PASSWORD is required/);
    expect(output.match(/Invalid configuration/g)).toHaveLength(1);
    expect(output.includes('s3cr3t-value'), 'BANK_PASSWORD value in the output').toBe(false);
    expect(output.includes('oauth-s3cr3t'), 'OAUTH_CLIENT_SECRET value in the output').toBe(false);
  });

  it.each([['staging'], ['unset'], ['production']])(
    'exits 1 with a live bank and NODE_ENV %s on every door a default would open, each named in one report, no stack',
    async (nodeEnv) => {
      const bank = await startCountingBank();
      const { code, output } = await runSubgraphToFailure({
        ...liveBankEnv(bank.url),
        ...(nodeEnv === 'unset' ? {} : { NODE_ENV: nodeEnv }),
        AUTH_JWKS_URL: 'http://issuer.example/.well-known/jwks.json',
        AUTH_AUDIENCE: '',
        STORE_URL: 'sqlite::memory:',
        TRUST_PROXY: '0.0.0.0/0',
        WEBHOOK_ALLOWED_IPS: '203.0.113.0/24',
        WEBHOOK_CLIENT_SECRET: sandboxCredentials.webhookClientSecret,
      });
      expect(code).toBe(1);
      expect(output).not.toContain('listening');
      expect(output.match(/Invalid configuration/g)).toHaveLength(1);
      for (const problem of [
        'AUTH_AUDIENCE is required when UPSTREAM_MODE=live',
        'AUTH_JWKS_URL must be https:// (or file:, or http:// to a loopback address) when UPSTREAM_MODE=live',
        'STORE_URL=sqlite::memory: is refused when UPSTREAM_MODE=live',
        'TRUST_PROXY=0.0.0.0/0 trusts every hop, refused with WEBHOOK_ALLOWED_IPS',
        "WEBHOOK_CLIENT_SECRET is the sandbox's published value, refused when UPSTREAM_MODE=live",
      ]) {
        expect(output).toContain(problem);
      }
      expect(output).not.toMatch(/\n\s+at /);
      expect(output.includes(sandboxCredentials.webhookClientSecret), 'the published secret in the output').toBe(false);
    },
  );

  it('exits 1 in production without AUTH_JWKS_URL and AUTH_ISSUER, naming both beside every other problem', async () => {
    const { code, output } = await runSubgraphToFailure({
      NODE_ENV: 'production',
      UPSTREAM_MODE: 'sandbox',
      WEBHOOK_CLIENT_ID: 'c',
      WEBHOOK_CLIENT_SECRET: 's-1',
      PORT: 'x',
    });
    expect(code).toBe(1);
    expect(output).not.toContain('listening');
    expect(output.match(/Invalid configuration/g)).toHaveLength(1);
    for (const problem of [
      'AUTH_JWKS_URL is required when NODE_ENV=production',
      'AUTH_ISSUER is required when NODE_ENV=production',
      'AUTH_AUDIENCE is required when NODE_ENV=production',
      'WEBHOOK_ALLOWED_IPS is required when NODE_ENV=production',
      'WEBHOOK_CLIENT_SECRET is shorter than 16 characters',
      'PORT must be',
    ]) {
      expect(output).toContain(problem);
    }
  });

  it('exits 1 on placeholder secrets, as a template ships them, naming each and printing none', async () => {
    const placeholders = {
      WEBHOOK_CLIENT_SECRET: 'REPLACE-ME-webhook-client-secret',
      BANK_PASSWORD: 'ChangeMe-bank-password',
      ROUTER_SECRET: '<the router secret>',
    };
    const bank = await startCountingBank();
    const { code, output } = await runSubgraphToFailure({ ...liveBankEnv(bank.url), ...placeholders });
    expect(code).toBe(1);
    expect(output).not.toContain('listening');
    for (const [name, value] of Object.entries(placeholders)) {
      expect(output).toContain(`${name} reads as a placeholder`);
      expect(output.includes(value), `${name}'s value in the output`).toBe(false);
    }
  });

  it('starts in production with the settings, and says whose tokens it checks', async () => {
    const subgraph = await startSubgraphProcess({ ...PRODUCTION_SANDBOX });
    expect(subgraph.logs[0]).toMatchObject({ auth: 'jwt' });
    expect(String(subgraph.logs[0]!.msg)).toContain(`authorization: JWT from ${PRODUCTION_SANDBOX.AUTH_ISSUER}`);
  });

  it('exits non-zero on an unreachable PostgreSQL STORE_URL, without its password', async () => {
    const unreachable = new URL(await unusedUrl());
    const storeUrl = `postgres://app:pg-s3cret-pw@${unreachable.host}/collections`;
    const { code, output } = await runSubgraphToFailure({ STORE_URL: storeUrl });
    expect(code).not.toBe(0);
    expect(output).not.toContain('listening');
    expect(output).toMatch(/could not start.*postgres/i);
    expect(output.includes('pg-s3cret-pw'), 'the password in the output').toBe(false);
  });
});

describe('SIGTERM', () => {
  it('closes WebSockets with 1001, finishes an in-flight delivery with 00, stores it, and exits 0 within 10 s', async () => {
    const storeUrl = tempStoreUrl();
    const subgraph = await startSubgraphProcess({ STORE_URL: storeUrl });
    const port = Number(new URL(subgraph.baseUrl).port);

    // A live subscriber.
    const client = createClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    onCleanup(async () => client.dispose());
    const closed = Promise.withResolvers<number>();
    client.on('closed', (event) => closed.resolve((event as { code: number }).code));
    client.subscribe(
      { query: 'subscription { incomingTransfer { settlementId } }' },
      { next: () => undefined, error: () => undefined, complete: () => undefined },
    );
    await subscribersLive(subgraph, 1);

    // A delivery the server has routed (it answered 100 Continue) whose body is not sent yet.
    const body = notificationBody();
    const payload = JSON.stringify(body);
    // Keep-alive with a long idle time, as the bank's collection service may hold its connections.
    const agent = new Agent({ keepAlive: true, timeout: 60_000 });
    onCleanup(async () => agent.destroy());
    const delivery = httpRequest(`${subgraph.baseUrl}/webhooks/collection`, {
      agent,
      method: 'POST',
      headers: { ...signedHeaders(), 'content-length': Buffer.byteLength(payload), expect: '100-continue' },
    });
    const replied = new Promise<{ status: number; reply: any }>((resolve, reject) => {
      delivery.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () => resolve({ status: response.statusCode!, reply: JSON.parse(text) }));
      });
      delivery.on('error', reject);
    });
    const continued = once(delivery, 'continue');
    delivery.flushHeaders();
    await continued;

    const signalled = performance.now();
    subgraph.child.kill('SIGTERM');
    await subgraph.logs.first((line) => String(line.msg).startsWith('draining'));
    expect(await closed.promise).toBe(1001);
    // No new connection while draining, even with a delivery still in flight.
    await waitFor(() => connectionRefused(port));

    delivery.end(payload);
    const { status, reply } = await replied;
    expect(status).toBe(200);
    expect(reply).toMatchObject({ responseCode: '00', sessionId: body.sessionId });

    const { code, signal } = await subgraph.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    // Well before the cut-off of lingering connections (typically within a second, so a loaded
    // machine has room): the drain ended because the work did, not because the deadline cut the
    // idle keep-alive connection.
    expect(performance.now() - signalled).toBeLessThan(SHUTDOWN_DEADLINES.connectionsMs - 500);
    expect(subgraph.logs.some((line) => String(line.msg).includes('ran out of time'))).toBe(false);
    // The last word is that the drain completed, at info, with how long it took.
    expect(subgraph.logs.at(-1)).toMatchObject({ level: 30, msg: 'drained, exiting', signal: 'SIGTERM', durationMs: expect.any(Number) });

    // The 00 was durable: the file, opened afresh, holds it (every start reads it so; no second process needed).
    const reopened = await createNotificationStore(storeUrl, { logger: silent });
    onCleanup(() => reopened.close());
    const [stored] = await reopened.getMany([body.settlementId]);
    expect(stored).toMatchObject({ settlementId: body.settlementId, transactionAmount: '1500.00', rawBody: payload });
  });
});

/** A socket to `port` that has sent `head` and received the start of the server's answer. */
async function heldOpen(port: number, head: string): Promise<{ answer: string; closed: Promise<unknown> }> {
  const socket = connect(port, '127.0.0.1');
  onCleanup(async () => void socket.destroy());
  socket.on('error', () => undefined);
  const closed = once(socket, 'close');
  socket.write(head);
  const [chunk] = (await once(socket, 'data')) as [Buffer];
  return { answer: chunk.toString('latin1'), closed };
}

describe('SIGTERM with a drain that cannot finish', () => {
  it('cuts what is still open at the connection deadline (a request, a silent WebSocket), says so, and exits 1 within 10 s', async () => {
    const subgraph = await startSubgraphProcess();
    const port = Number(new URL(subgraph.baseUrl).port);
    // A request whose body never comes; 100 Continue shows the server holds it before the signal.
    const request = await heldOpen(
      port,
      'POST /graphql HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\nexpect: 100-continue\r\n\r\n',
    );
    expect(request.answer).toMatch(/^HTTP\/1\.1 100 /);
    // A WebSocket client that will never answer the server's close frame.
    const websocket = await heldOpen(
      port,
      'GET /graphql HTTP/1.1\r\nhost: 127.0.0.1\r\nupgrade: websocket\r\nconnection: Upgrade\r\n' +
        'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\nsec-websocket-protocol: graphql-transport-ws\r\n\r\n',
    );
    expect(websocket.answer).toMatch(/^HTTP\/1\.1 101 /);

    const signalled = performance.now();
    subgraph.child.kill('SIGTERM');
    await Promise.all([request.closed, websocket.closed]);
    const { code, signal } = await subgraph.exited;
    const took = performance.now() - signalled;

    expect({ code, signal }).toEqual({ code: 1, signal: null });
    // Cut at the connection deadline, not left to the forced exit at the end of the budget.
    expect(took).toBeGreaterThanOrEqual(SHUTDOWN_DEADLINES.connectionsMs - 100);
    expect(took).toBeLessThan(SHUTDOWN_DEADLINES.exitMs);
    const messages = subgraph.logs.map((line) => String(line.msg));
    expect(messages).toContainEqual(expect.stringContaining('the drain ran out of time: connections still open at its deadline were cut'));
    expect(messages.at(-1)).toBe('the drain did not finish cleanly; exiting 1');
  });
});

describe('the drain, in process', () => {
  it('answers 503 to readiness on an open connection once close() begins, while an in-flight write gets its 00', async () => {
    const store = await openMemoryStore();
    const insert = holdCalls(store, 'insert');
    const app = await startApp({}, { store: insert.target });
    const port = Number(new URL(app.baseUrl).port);
    // Begun before the write below, so the server is inside it when the drain begins.
    const readiness = await beginRequest(port, 'GET /health/ready HTTP/1.1\r\nhost: 127.0.0.1\r\n');

    const socket: Socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const ended = once(socket, 'close');
    const body = notificationBody();
    const payload = JSON.stringify(body);
    const headers = Object.entries(signedHeaders())
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(
      `POST /webhooks/collection HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}content-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
    );
    await insert.reached;

    const closing = app.app.close();
    await waitFor(() => connectionRefused(port));
    // Pipelined behind the write still in flight, on the connection that stayed open.
    await new Promise((resolve) => socket.write('GET /health/ready HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n', resolve));
    // The edge refuses the drain's requests before any router sees them; this answer comes once the
    // server has read the pipelined request too, so the write may end.
    expect(await readiness.finish()).toMatch(/^HTTP\/1\.1 503 [^]*connection: close/i);
    insert.release();
    await ended;
    await closing;

    const responses = received.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(responses.map((r) => r.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 503']);
    expect(JSON.parse(responses[0]!.slice(responses[0]!.indexOf('\r\n\r\n') + 4))).toMatchObject({
      responseCode: '00',
      sessionId: body.sessionId,
    });
    expect((await store.getMany([body.settlementId]))[0]?.settlementId).toBe(body.settlementId);
  });
});
