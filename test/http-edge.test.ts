import { once } from 'node:events';
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SERVER_TIMEOUTS } from '../src/server/http-edge.ts';
import { notificationBody, signedHeaders, startApp } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { unusedUrl } from './helpers/fake-bank.ts';

/** One request of every kind the server answers, as raw HTTP/1.1 (keep-alive, the default). */
function requests(): Record<string, string> {
  const delivery = JSON.stringify(notificationBody());
  const headers = Object.entries(signedHeaders())
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const query = JSON.stringify({ query: '{ __typename }' });
  return {
    'POST /graphql': `POST /graphql HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: ${query.length}\r\n\r\n${query}`,
    'GET /graphql (landing page)': 'GET /graphql HTTP/1.1\r\nhost: t\r\naccept: text/html\r\n\r\n',
    'POST /webhooks/collection': `POST /webhooks/collection HTTP/1.1\r\nhost: t\r\n${headers}content-length: ${Buffer.byteLength(delivery)}\r\n\r\n${delivery}`,
    'GET /health/live': 'GET /health/live HTTP/1.1\r\nhost: t\r\n\r\n',
    'GET /health/ready': 'GET /health/ready HTTP/1.1\r\nhost: t\r\n\r\n',
    'GET /metrics': 'GET /metrics HTTP/1.1\r\nhost: t\r\n\r\n',
  };
}

/** A raw connection that collects what it receives and resolves `response()` at each complete head. */
async function rawConnection(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  onCleanup(() => void socket.destroy());
  await once(socket, 'connect');
  let received = '';
  let waiting: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    if (received.includes('\r\n\r\n')) waiting?.();
  });
  return {
    socket,
    /** Sends `text` and resolves with the response's head once it has arrived. */
    async send(text: string): Promise<string> {
      received = '';
      const head = new Promise<void>((resolve) => (waiting = resolve));
      socket.write(text);
      await head;
      return received.slice(0, received.indexOf('\r\n\r\n'));
    },
  };
}

// One edge for every route: a load balancer keeps idle connections 60 s, so a route that closed
// them sooner (Node's own default is 5 s) would see it reuse a connection we had just closed.
describe('the HTTP edge: one set of timeouts for every route', () => {
  it('keeps idle connections longer than a load balancer does (Fastify’s 72 s), with headers and request timeouts that fit', () => {
    expect(SERVER_TIMEOUTS.keepAliveTimeout).toBeGreaterThanOrEqual(72_000);
    expect(SERVER_TIMEOUTS.headersTimeout).toBeLessThanOrEqual(SERVER_TIMEOUTS.requestTimeout);
    expect(SERVER_TIMEOUTS.headersTimeout).toBeGreaterThanOrEqual(30_000);
  });

  it('announces the same keep-alive on every route, the webhook and the landing page included', async () => {
    const { baseUrl } = await startApp();
    const port = Number(new URL(baseUrl).port);
    const announced: Record<string, string | undefined> = {};
    for (const [route, text] of Object.entries(requests())) {
      const head = await (await rawConnection(port)).send(text);
      expect(head, route).toMatch(/^HTTP\/1\.1 200 /);
      announced[route] = /^keep-alive: (.*)$/im.exec(head)?.[1];
    }
    // Longer than a load balancer's 60 s idle time, and the same everywhere.
    expect(announced).toEqual(Object.fromEntries(Object.keys(requests()).map((route) => [route, 'timeout=72'])));
  });

  it('keeps every route’s connection open and reusable after it idles past Node’s 5 s default', async () => {
    const { baseUrl } = await startApp();
    const port = Number(new URL(baseUrl).port);
    const connections = await Promise.all(
      Object.entries(requests()).map(async ([route, text]) => {
        const connection = await rawConnection(port);
        await connection.send(text);
        let closed = false;
        connection.socket.once('close', () => (closed = true));
        return { route, text, connection, closed: () => closed };
      }),
    );
    // The one wait of the suite that is the point: idle time, no event to wait on. Every route idles
    // at once, past the moment Node's defaults would close it (the timeout and its buffer, 6 s on
    // Node 24), with a margin so that a late timer on a loaded machine cannot hide a close.
    const node = createServer();
    await new Promise((resolve) => setTimeout(resolve, node.keepAliveTimeout + (node.keepAliveTimeoutBuffer ?? 0) + 1_500));
    for (const { route, text, connection, closed } of connections) {
      expect(closed(), `${route} closed while idle`).toBe(false);
      // The same connection carries the next request (the webhook's with a new settlementId).
      const again = route.startsWith('POST /webhooks') ? requests()[route]! : text;
      expect(await connection.send(again), route).toMatch(/^HTTP\/1\.1 200 /);
    }
  }, 20_000);
});

describe('WEBHOOK_PORT: the webhook and health on a port of their own', () => {
  it('serves the webhook and health only there, and /graphql and /metrics only on PORT, with the same keep-alive', async () => {
    const webhookPort = Number(new URL(await unusedUrl()).port);
    const { baseUrl } = await startApp({ WEBHOOK_PORT: String(webhookPort) });
    const port = Number(new URL(baseUrl).port);
    const WEBHOOK_ROUTES = ['POST /webhooks/collection', 'GET /health/live', 'GET /health/ready'];
    for (const [route, text] of Object.entries(requests())) {
      const onWebhookPort = WEBHOOK_ROUTES.includes(route);
      const served = await (await rawConnection(onWebhookPort ? webhookPort : port)).send(text);
      expect(served, `${route} on its port`).toMatch(/^HTTP\/1\.1 200 /);
      expect(/^keep-alive: (.*)$/im.exec(served)?.[1], route).toBe('timeout=72');
      const refused = await (await rawConnection(onWebhookPort ? port : webhookPort)).send(text);
      expect(refused, `${route} on the other port`).toMatch(/^HTTP\/1\.1 404 /);
    }
  });
});
