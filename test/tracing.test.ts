import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'graphql-ws';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';
import { notificationBody, signedHeaders } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { ancestry, SpanKindNumber, startOtlpCollector, type OtlpCollector } from './helpers/otlp-collector.ts';
import { startSubgraphProcess, type SubgraphProcess } from './helpers/process.ts';
import { waitFor } from './helpers/wait.ts';

/** A router's span: a fresh trace id and span id, sampled, as Apollo Router would send them. */
function routerSpan() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/**
 * A collector and a traced subgraph for a whole describe block, stopped by the returned function
 * (onCleanup is per test; these outlive one).
 */
async function startSharedTraced() {
  const stops: (() => Promise<void>)[] = [];
  const collector = await startOtlpCollector({ register: (stop) => stops.push(stop) });
  const subgraph = await startSubgraphProcess(
    { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' },
    undefined,
    { register: (stop) => stops.push(stop) },
  );
  return { collector, subgraph, stop: async () => void (await Promise.all(stops.reverse().map((stop) => stop()))) };
}

/** The subgraph exporting to `collector` over OTLP/HTTP JSON, batches flushed quickly. */
function startTraced(collector: OtlpCollector, env: Record<string, string> = {}): Promise<SubgraphProcess> {
  return startSubgraphProcess({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    ...env,
  });
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, headers: response.headers, body: (await response.body.json()) as any };
}

/** A graphql-ws client of the subgraph at `baseUrl` whose upgrade request carries `traceparent`, as the router's would; closed after the test. */
function wsClient(baseUrl: string, traceparent: string) {
  const client = createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: class extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers: { traceparent } });
      }
    },
    retryAttempts: 0,
  });
  onCleanup(async () => client.dispose());
  return client;
}

/** Subscribes with `query`; resolves with its first event. */
function firstEvent(client: ReturnType<typeof createClient>, query: string): Promise<unknown> {
  const event = Promise.withResolvers<unknown>();
  client.subscribe({ query }, { next: event.resolve, error: event.reject, complete: () => undefined });
  return event.promise;
}

const LOOKUP =
  'query Lookup { account(accountNumber: "0123456789", bankCode: "000023") { accountName bvn bank { name } } bvn(number: "22212345678") { firstName } }';

// One traced process and collector serve every test of this block, each test in a trace of its own
// (its router span); the last one stops the process to flush whatever is still batched.
describe('OpenTelemetry tracing', () => {
  let collector: OtlpCollector;
  let subgraph: SubgraphProcess;
  let stopShared: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ collector, subgraph, stop: stopShared } = await startSharedTraced());
  });
  afterAll(() => stopShared?.());

  it('makes the bank call a CLIENT span under the router span that sent the query', async () => {
    const router = routerSpan();
    const { body } = await post(`${subgraph.baseUrl}/graphql`, { query: LOOKUP }, { traceparent: router.traceparent });
    expect(body.errors).toBeUndefined();

    const inTrace = (name: string) => collector.waitForSpan((s) => s.traceId === router.traceId && s.name === name);
    const bankCall = await inTrace('GET account.lookupAccount');
    const operation = await inTrace('query Lookup');
    expect(bankCall.kind).toBe(SpanKindNumber.CLIENT);
    expect(bankCall.attributes).toMatchObject({
      'bank.area': 'account',
      'bank.operation': 'lookupAccount',
      'bank.attempt': 1,
      'http.request.method': 'GET',
      'http.response.status_code': 200,
    });
    expect(bankCall.attributes['url.full']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[\w/]*account\/NIP$/);
    expect(ancestry(collector.spans, bankCall)).toEqual([operation.spanId, router.spanId]);
    expect(operation.kind).toBe(SpanKindNumber.SERVER);
    expect(operation.attributes).toMatchObject({
      'graphql.operation.type': 'query',
      'graphql.operation.name': 'Lookup',
      'graphql.operation.root_fields': 'account,bvn',
      'http.response.status_code': 200,
    });
    // Whether the caller was authenticated, never who (authorization is off here: no token checked).
    expect(operation.attributes['graphql.caller.authenticated']).toBe(false);
    expect(operation.resource['service.name']).toBe('bank-subgraph');
    expect((await inTrace('GET account.lookupBvn')).parentSpanId).toBe(operation.spanId);
  });

  it("records a refused bank call's contract code on its span and on the operation's", async () => {
    const router = routerSpan();
    const { body } = await post(
      `${subgraph.baseUrl}/graphql`,
      { query: '{ account(accountNumber: "5555555555", bankCode: "000023") { accountName } }' },
      { traceparent: router.traceparent },
    );
    const code = body.errors[0].extensions.code as string;
    const bankCall = await collector.waitForSpan((s) => s.traceId === router.traceId && s.name === 'GET account.lookupAccount');
    const operation = await collector.waitForSpan((s) => s.traceId === router.traceId && s.name === 'query');
    for (const span of [bankCall, operation]) {
      expect(span.attributes['error.type']).toBe(code);
      expect(span.status).toMatchObject({ code: 2, message: code });
    }
  });

  it('traces a webhook delivery with its reply code, the store write and the publish; its log line carries the trace id', async () => {
    const router = routerSpan();
    const delivered = notificationBody();
    const { body } = await post(`${subgraph.baseUrl}/webhooks/collection`, delivered, {
      ...signedHeaders(),
      traceparent: router.traceparent,
    });
    expect(body.responseCode).toBe('00');

    const delivery = await collector.waitForSpan((s) => s.traceId === router.traceId && s.name === 'POST /webhooks/collection');
    expect(delivery.kind).toBe(SpanKindNumber.SERVER);
    expect(delivery.parentSpanId).toBe(router.spanId);
    expect(delivery.attributes).toMatchObject({ 'collection.response_code': '00', 'collection.reason': 'accepted' });
    const write = await collector.waitForSpan((s) => s.name === 'INSERT collection_notifications' && s.parentSpanId === delivery.spanId);
    expect(write.attributes).toMatchObject({ 'db.system.name': 'sqlite', 'collection.store_outcome': 'inserted' });
    const publish = await collector.waitForSpan((s) => s.name === 'send notificationsStored' && s.parentSpanId === delivery.spanId);
    expect(publish.kind).toBe(SpanKindNumber.PRODUCER);

    // Log lines are written in batches, at most 100 ms late.
    const line = await waitFor(() => subgraph.logs.find((entry) => entry.settlementId === delivered.settlementId));
    expect(line).toMatchObject({ trace_id: router.traceId, span_id: delivery.spanId });
  });

  it('makes each subscription event a span under the router span of the WebSocket upgrade', async () => {
    const router = routerSpan();
    const event = firstEvent(
      wsClient(subgraph.baseUrl, router.traceparent),
      'subscription Transfers { incomingTransfer { settlementId } }',
    );
    const subscribed = await collector.waitForSpan((s) => s.traceId === router.traceId && s.name === 'subscription Transfers');
    expect(subscribed.parentSpanId).toBe(router.spanId);
    expect(subscribed.attributes['graphql.caller.authenticated']).toBe(false);

    await post(`${subgraph.baseUrl}/webhooks/collection`, notificationBody(), signedHeaders());
    await event;
    const eventSpan = await collector.waitForSpan((s) => s.traceId === router.traceId && s.name === 'subscription Transfers event');
    expect(ancestry(collector.spans, eventSpan)).toEqual([subscribed.spanId, router.spanId]);
    expect(eventSpan.attributes).toMatchObject({ 'graphql.operation.type': 'subscription', 'graphql.operation.name': 'Transfers' });
  });

  it("makes one event span per result of an execution two subscribers share, under the first one's subscription span", async () => {
    const query = 'subscription Shared { incomingTransfer { settlementId } }';
    const [first, second] = [routerSpan(), routerSpan()];
    const firstGot = firstEvent(wsClient(subgraph.baseUrl, first.traceparent), query);
    const firstSubscribed = await collector.waitForSpan((s) => s.traceId === first.traceId && s.name === 'subscription Shared');
    const secondGot = firstEvent(wsClient(subgraph.baseUrl, second.traceparent), query);
    await collector.waitForSpan((s) => s.traceId === second.traceId && s.name === 'subscription Shared');

    await post(`${subgraph.baseUrl}/webhooks/collection`, notificationBody(), signedHeaders());
    await Promise.all([firstGot, secondGot]);
    // A span that ends after the event's: once it is exported, every span that ended before it is too.
    const marker = routerSpan();
    await post(`${subgraph.baseUrl}/graphql`, { query: '{ banks { code } }' }, { traceparent: marker.traceparent });
    await collector.waitForSpan((s) => s.traceId === marker.traceId && s.name === 'query');
    const events = collector.spans.filter((s) => s.name === 'subscription Shared event');
    expect(events).toHaveLength(1);
    expect(ancestry(collector.spans, events[0]!)).toEqual([firstSubscribed.spanId, first.spanId]);
  });

  it("makes each event of a callback-protocol subscription a span under the router's subscribe request", async () => {
    // The router's callback endpoint: 200 to check, 204 to the rest.
    const callbacks = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => res.writeHead((JSON.parse(body) as { action: string }).action === 'check' ? 200 : 204).end());
    });
    await new Promise<void>((resolve) => callbacks.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise<void>((resolve) => (callbacks.closeAllConnections(), callbacks.close(() => resolve()))));
    const router = routerSpan();
    const subscription = {
      callbackUrl: `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/callback/1`,
      subscriptionId: randomUUID(),
      verifier: 'v',
      heartbeatIntervalMs: 0,
    };
    const query = 'subscription Transfers { incomingTransfer { settlementId } }';
    await post(
      `${subgraph.baseUrl}/graphql`,
      { query, extensions: { subscription } },
      { traceparent: router.traceparent, accept: 'application/json;callbackSpec=1.0' },
    );
    const subscribed = await collector.waitForSpan((s) => s.traceId === router.traceId && s.name === 'subscription Transfers');

    await post(`${subgraph.baseUrl}/webhooks/collection`, notificationBody(), signedHeaders());
    const event = await collector.waitForSpan((s) => s.traceId === router.traceId && s.name === 'subscription event');
    expect(ancestry(collector.spans, event)).toEqual([subscribed.spanId, router.spanId]);
  });

  it('exports no credential, token, password, BVN or account number in any byte', async () => {
    const url = `${subgraph.baseUrl}/graphql`;
    const router = routerSpan();
    const headers = { traceparent: router.traceparent };
    await post(url, { query: LOOKUP }, headers);
    await post(
      url,
      {
        query: 'query($n: String!) { postingAccount(accountNumber: $n, beneficiaryBank: "000013") { accountName } }',
        variables: { n: '0011223344' },
      },
      headers,
    );
    const login = await post(
      url,
      { query: 'mutation { merchantLogin(email: "merchant@sandbox.ng", password: "Sandbox#2026") { accessToken refreshToken } }' },
      headers,
    );
    const tokens = login.body.data.merchantLogin as { accessToken: string; refreshToken: string };
    const delivery = signedHeaders();
    await post(`${subgraph.baseUrl}/webhooks/collection`, notificationBody({ accountNumber: '9876543210' }), {
      ...delivery,
      traceparent: router.traceparent,
    });
    await collector.waitForSpan((s) => s.traceId === router.traceId && s.name === 'POST /webhooks/collection');
    await collector.waitForSpan((s) => s.traceId === router.traceId && s.name === 'mutation');

    // Everything still batched is flushed on the way out.
    subgraph.child.kill('SIGTERM');
    await subgraph.exited;
    const exported = Buffer.concat(collector.bodies.map((b) => b.body)).toString('utf8');
    expect(exported).toContain(router.traceId);
    const secrets = [
      ...Object.values(sandboxCredentials),
      'Sandbox#2026',
      tokens.accessToken,
      tokens.refreshToken,
      delivery['x-auth-signature'],
      '0123456789',
      '0011223344',
      '9876543210',
      '22212345678',
    ].filter((value): value is string => typeof value === 'string');
    expect(secrets.length).toBeGreaterThan(15);
    for (const secret of secrets) expect(exported, secret).not.toContain(secret);
  });
});

describe('OpenTelemetry tracing, each in a process of its own', () => {
  it('exports over http/protobuf, the default protocol', async () => {
    const collector = await startOtlpCollector();
    const subgraph = await startTraced(collector, {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_SERVICE_NAME: 'bank-subgraph-test',
    });
    const router = routerSpan();
    await post(`${subgraph.baseUrl}/graphql`, { query: '{ banks { code name } }' }, { traceparent: router.traceparent });
    subgraph.child.kill('SIGTERM');
    await subgraph.exited;
    const traces = collector.bodies.filter((b) => b.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    expect(traces[0]!.contentType).toBe('application/x-protobuf');
    // The trace id travels as its 16 raw bytes.
    const exported = Buffer.concat(traces.map((b) => b.body));
    expect(exported.includes(Buffer.from(router.traceId, 'hex'))).toBe(true);
    // OTEL_SERVICE_NAME names the resource (a protobuf string is its UTF-8 bytes).
    expect(exported.includes(Buffer.from('bank-subgraph-test'))).toBe(true);
  });

  it('starts no SDK and exports nothing without an exporter', async () => {
    const collector = await startOtlpCollector();
    // Everything but an exporter: the SDK stays off, and the logs say so.
    const plain = await startSubgraphProcess({ OTEL_SERVICE_NAME: 'unused', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(await waitFor(() => plain.logs.find((entry) => 'tracing' in entry))).toMatchObject({ tracing: 'off' });
    // An endpoint with the exporter switched off: the collector must hear nothing.
    const none = await startTraced(collector, { OTEL_TRACES_EXPORTER: 'none' });
    for (const subgraph of [plain, none]) {
      const router = routerSpan();
      await post(`${subgraph.baseUrl}/graphql`, { query: '{ banks { code } }' }, { traceparent: router.traceparent });
      await post(`${subgraph.baseUrl}/webhooks/collection`, notificationBody(), { ...signedHeaders(), traceparent: router.traceparent });
      subgraph.child.kill('SIGTERM');
      await subgraph.exited;
      expect(subgraph.logs.filter((entry) => 'trace_id' in entry)).toEqual([]);
    }
    expect(collector.bodies).toEqual([]);
  });
});
