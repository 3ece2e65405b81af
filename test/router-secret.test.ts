import type { Client } from 'graphql-ws';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { scrape } from './helpers/metrics.ts';
import { waitFor } from './helpers/wait.ts';

const SECRET = 'router-s3cret-value';
const QUERY = '{ bank(code: "000023") { name } }';
const SUBSCRIPTION = 'subscription { incomingTransfer { settlementId } }';

/** GET /graphql as a browser asks for the landing page. */
async function landingPage(app: TestApp, headers: Record<string, string> = {}) {
  const response = await request(app.graphqlUrl, { headers: { accept: 'text/html', ...headers } });
  return { status: response.statusCode, contentType: String(response.headers['content-type']), text: await response.body.text() };
}

/**
 * Subscribes to incomingTransfer and resolves with the settlementId of its first event, or rejects
 * with the close code when the server ends the connection first.
 */
async function firstTransfer(app: TestApp, client: Client): Promise<string> {
  const first = Promise.withResolvers<string>();
  const dispose = client.subscribe<{ incomingTransfer: { settlementId: string } }>(
    { query: SUBSCRIPTION },
    {
      next: (result) => (result.data ? first.resolve(result.data.incomingTransfer.settlementId) : first.reject(result.errors)),
      error: (error) => first.reject(new Error(`closed ${(error as { code?: number }).code}`)),
      complete: () => first.reject(new Error('completed without an event')),
    },
  );
  let settled = false;
  first.promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  try {
    // Deliver only once the subscription is live, so a refused one cannot pass by missing the event.
    const live = waitFor(async () => (settled || (await scrape(app, 'graphql_active_subscriptions')) === 1 ? true : undefined));
    await Promise.race([live, first.promise]);
    const body = notificationBody();
    expect((await app.deliver(body)).reply.responseCode).toBe('00');
    expect(await first.promise).toBe(body.settlementId);
    return body.settlementId;
  } finally {
    dispose();
  }
}

/** Resolves with the close code once the client's socket closes. */
function closeCode(client: Client): Promise<number> {
  const closed = Promise.withResolvers<number>();
  client.on('closed', (event) => closed.resolve((event as { code: number }).code));
  return closed.promise;
}

describe('with ROUTER_SECRET set', () => {
  it('refuses POST /graphql without the Router-Secret header with 401 ROUTER_SECRET_REQUIRED', async () => {
    const app = await startApp({ ROUTER_SECRET: SECRET });
    const response = await app.query(QUERY);
    expect(response.status).toBe(401);
    expect(response.data).toBeUndefined();
    expect(response.errors?.[0]?.extensions?.code).toBe('ROUTER_SECRET_REQUIRED');
  });

  it('refuses POST /graphql with a wrong Router-Secret with 401', async () => {
    const app = await startApp({ ROUTER_SECRET: SECRET });
    for (const wrong of [`${SECRET}x`, SECRET.slice(0, -1), SECRET.toUpperCase(), '']) {
      const response = await app.query(QUERY, {}, { 'Router-Secret': wrong });
      expect(response.status).toBe(401);
      expect(response.errors?.[0]?.extensions?.code).toBe('ROUTER_SECRET_REQUIRED');
    }
  });

  it('answers POST /graphql carrying the right Router-Secret', async () => {
    const app = await startApp({ ROUTER_SECRET: SECRET });
    const response = await app.query(QUERY, {}, { 'Router-Secret': SECRET });
    expect(response.status).toBe(200);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ bank: { name: expect.any(String) } });
  });

  it('refuses the GET /graphql landing page without the secret', async () => {
    const app = await startApp({ ROUTER_SECRET: SECRET });
    const page = await landingPage(app);
    expect(page.status).toBe(401);
    expect(JSON.parse(page.text).errors[0].extensions.code).toBe('ROUTER_SECRET_REQUIRED');
  });

  it('leaves the webhook, health and metrics routes open', async () => {
    const app = await startApp({ ROUTER_SECRET: SECRET });
    expect((await app.deliver(notificationBody())).reply.responseCode).toBe('00');
    for (const path of ['/health/live', '/health/ready', '/metrics']) {
      const response = await request(`${app.baseUrl}${path}`);
      await response.body.dump();
      expect(response.statusCode, path).toBe(200);
    }
  });

  it('closes a graphql-ws client without the secret with 4403, never subscribing it', async () => {
    const app = await startApp({ ROUTER_SECRET: SECRET });
    const client = app.wsClient();
    const closed = closeCode(client);
    await expect(firstTransfer(app, client)).rejects.toThrow('closed 4403');
    expect(await closed).toBe(4403);
    expect(await scrape(app, 'graphql_active_subscriptions')).toBe(0);
  });

  it('closes a graphql-ws client with a wrong secret in connectionParams with 4403', async () => {
    const app = await startApp({ ROUTER_SECRET: SECRET });
    const client = app.wsClient({ connectionParams: { 'Router-Secret': 'not-the-secret' } });
    await expect(firstTransfer(app, client)).rejects.toThrow('closed 4403');
  });

  it('lets a graphql-ws client subscribe with the secret in the upgrade request header', async () => {
    const app = await startApp({ ROUTER_SECRET: SECRET });
    await expect(firstTransfer(app, app.wsClient({ headers: { 'Router-Secret': SECRET } }))).resolves.toMatch(/\S/);
  });

  it('lets a graphql-ws client subscribe with the secret in connectionParams', async () => {
    const app = await startApp({ ROUTER_SECRET: SECRET });
    await expect(firstTransfer(app, app.wsClient({ connectionParams: { 'Router-Secret': SECRET } }))).resolves.toMatch(/\S/);
  });
});

describe('without ROUTER_SECRET', () => {
  it('answers POST /graphql, the landing page and graphql-ws clients without any header', async () => {
    const app = await startApp();
    const response = await app.query(QUERY);
    expect(response.status).toBe(200);
    expect(response.data).toEqual({ bank: { name: expect.any(String) } });

    const page = await landingPage(app);
    expect(page.status).toBe(200);
    expect(page.contentType).toMatch(/^text\/html/);

    await firstTransfer(app, app.wsClient());
  });
});
