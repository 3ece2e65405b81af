import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { createPubSub, type PubSub } from '../src/pubsub/index.ts';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';
import { SANDBOX_PREFIXES } from '../src/sandbox/index.ts';
import { notificationBody, signedHeaders, startApp } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { scrape } from './helpers/metrics.ts';
import { withMethod } from './helpers/proxy.ts';
import { serviceUrl } from './helpers/services.ts';
import { isolatedPostgresUrl, openMemoryStore } from './helpers/stores.ts';

async function get(url: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const response = await request(url);
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

/** `target` with its `ping` rejecting, everything else the real thing: one part down, the rest up. */
function withFailingPing<T extends { ping(): Promise<void> }>(target: T): T {
  return withMethod(target, 'ping', async () => Promise.reject(new Error('connection lost')));
}

/** A real in-memory pub/sub that says its link is down, as Redis pub/sub does while Redis is gone. */
async function disconnectedPubSub(): Promise<PubSub> {
  const pubsub = await createPubSub('memory:', { logger: createLogger('silent'), channelPrefix: 'test:' });
  onCleanup(() => pubsub.close());
  return Object.create(pubsub, { connected: { value: false } }) as PubSub;
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text exposition into samples; throws on a line that is not valid exposition. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not Prometheus text: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key!] = value!;
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample named `name` whose labels include `labels`. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  const matching = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (matching.length > 1) throw new Error(`${matching.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return matching[0]?.value;
}

describe('health routes', () => {
  it('answers /health/live with 200', async () => {
    const { baseUrl } = await startApp();
    const live = await get(`${baseUrl}/health/live`);
    expect(live.status).toBe(200);
    expect(JSON.parse(live.text)).toEqual({ status: 'ok' });
  });

  it('answers /health/ready with 200 when the store and pub/sub answer', async () => {
    const { baseUrl } = await startApp();
    const ready = await get(`${baseUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({ status: 'ready', store: 'ok', pubsub: 'ok' });
  });

  it('answers /health/ready with 200 on PostgreSQL and Redis', async (context) => {
    const databaseUrl = serviceUrl('DATABASE_URL');
    const redisUrl = serviceUrl('REDIS_URL');
    if (!databaseUrl || !redisUrl) return context.skip();
    const { baseUrl } = await startApp({ STORE_URL: await isolatedPostgresUrl(databaseUrl), PUBSUB_URL: redisUrl });
    const ready = await get(`${baseUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({ status: 'ready', store: 'ok', pubsub: 'ok' });
  });

  it('answers /health/ready with 503 naming the store when its ping fails, while liveness stays 200', async () => {
    const { baseUrl } = await startApp({}, { store: withFailingPing(await openMemoryStore()) });
    const ready = await get(`${baseUrl}/health/ready`);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text)).toEqual({ status: 'unavailable', store: 'down', pubsub: 'ok' });
    expect((await get(`${baseUrl}/health/live`)).status).toBe(200);
  });

  it('stays ready while pub/sub is down, saying so beside it and in pubsub_connected', async () => {
    const app = await startApp({}, { pubsub: await disconnectedPubSub() });
    const ready = await get(`${app.baseUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({ status: 'ready', store: 'ok', pubsub: 'down' });
    expect(await scrape(app, 'pubsub_connected')).toBe(0);
    expect(await scrape(await startApp(), 'pubsub_connected')).toBe(1);
  });
});

describe('/metrics', () => {
  const ROUTER_SECRET = 'router-s3cret-for-metrics';
  const WEBHOOK_SECRET = 'webhook-s3cret-for-metrics';

  /** An app that has served a 00 and a 02 delivery, an account lookup, a refused query and a 404. */
  async function exercisedApp() {
    const app = await startApp({ ROUTER_SECRET, WEBHOOK_CLIENT_SECRET: WEBHOOK_SECRET });
    const headers = signedHeaders(sandboxCredentials.webhookClientId, WEBHOOK_SECRET);
    expect((await app.deliver(notificationBody({ accountNumber: '0123456789' }), headers)).reply.responseCode).toBe('00');
    expect((await app.deliver(notificationBody({ accountNumber: '0123456789' }), signedHeaders())).reply.responseCode).toBe('02');

    const router = { 'router-secret': ROUTER_SECRET };
    const lookup = await app.query('{ account(accountNumber: "0123456789", bankCode: "000023") { accountName } }', {}, router);
    expect(lookup.errors).toBeUndefined();
    const refused = await app.query('{ account(accountNumber: "12345") { accountName } }', {}, router);
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await get(`${app.baseUrl}/accounts/0123456789?bvn=22212345678`)).status).toBe(404);
    expect((await get(`${app.baseUrl}/health/live?account=0123456789`)).status).toBe(200);

    const metrics = await get(`${app.baseUrl}/metrics`);
    expect(metrics.status).toBe(200);
    return { app, metrics, samples: parseExposition(metrics.text) };
  }

  it('is Prometheus text format', async () => {
    const { metrics } = await exercisedApp();
    expect(metrics.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metrics.text).toContain('# TYPE collection_webhook_replies_total counter');
    expect(metrics.text).toContain('# TYPE http_request_duration_seconds histogram');
  });

  it('counts webhook replies by response code', async () => {
    const { samples } = await exercisedApp();
    expect(valueOf(samples, 'collection_webhook_replies_total', { response_code: '00' })).toBe(1);
    expect(valueOf(samples, 'collection_webhook_replies_total', { response_code: '02' })).toBe(1);
    expect(valueOf(samples, 'collection_webhook_replies_total', { response_code: '01' })).toBeUndefined();
  });

  it('times the calls to the bank by area, operation and outcome', async () => {
    const { samples } = await exercisedApp();
    const labels = { area: 'account', operation: 'lookupAccount', outcome: 'ok' };
    expect(valueOf(samples, 'bank_upstream_request_duration_seconds_count', labels)).toBe(1);
    expect(valueOf(samples, 'bank_upstream_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(1);
  });

  it('counts GraphQL operations by type and outcome', async () => {
    const { samples } = await exercisedApp();
    expect(valueOf(samples, 'graphql_operations_total', { operation_type: 'query', outcome: 'ok' })).toBe(1);
    expect(valueOf(samples, 'graphql_operations_total', { operation_type: 'query', outcome: 'BAD_USER_INPUT' })).toBe(1);
  });

  it('times HTTP requests by route pattern, never by the raw URL', async () => {
    const { samples } = await exercisedApp();
    const count = (labels: Record<string, string>) => valueOf(samples, 'http_request_duration_seconds_count', labels);
    expect(count({ method: 'POST', route: '/webhooks/collection', status_code: '200' })).toBe(2);
    expect(count({ method: 'POST', route: '/graphql', status_code: '200' })).toBe(2);
    expect(count({ method: 'GET', route: '/health/live', status_code: '200' })).toBe(1);
    const routes = new Set(samples.filter((s) => s.name === 'http_request_duration_seconds_count').map((s) => s.labels.route));
    expect([...routes].filter((route) => route !== undefined && /\?|\d{10}/.test(route))).toEqual([]);
    expect(samples.some((s) => s.name === 'http_request_duration_seconds_count' && s.labels.status_code === '404')).toBe(true);
  });

  it('never shows a configured secret, an account number or a URL of the bank', async () => {
    const { metrics } = await exercisedApp();
    const forbidden = [
      ROUTER_SECRET,
      WEBHOOK_SECRET,
      sandboxCredentials.apiToken,
      sandboxCredentials.password,
      sandboxCredentials.billingPassword,
      sandboxCredentials.postingPassword,
      sandboxCredentials.oauthClientSecret,
      '0123456789',
      '0011223344',
      '22212345678',
      // What any URL of the embedded sandbox holds, whatever port it was given: its loopback
      // address and its areas' paths (as a path goes on: `/collection` alone ends our webhook's route).
      '127.0.0.1',
      ...Object.values(SANDBOX_PREFIXES).map((prefix) => `${prefix}/`),
    ];
    // Report which kind leaked, never the value itself.
    const leaked = forbidden.map((value, index) => (metrics.text.includes(value) ? `forbidden[${index}]` : undefined)).filter(Boolean);
    expect(leaked).toEqual([]);
  });
});
