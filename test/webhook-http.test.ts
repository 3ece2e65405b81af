// The webhook is answered by node:http ahead of Fastify (src/collection/webhook-route.ts). These are
// the HTTP behaviours Fastify used to give it, checked on the wire.
import { once } from 'node:events';
import { connect } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { notificationBody, signedHeaders, startApp } from './helpers/app.ts';
import { beginRequest } from './helpers/drain.ts';
import { captureLogs } from './helpers/logs.ts';
import { scrapeSum } from './helpers/metrics.ts';
import { holdCalls } from './helpers/proxy.ts';
import { capturingLogger, openMemoryStore } from './helpers/stores.ts';

/** Sends raw HTTP/1.1 on one connection; resolves with everything received once the server closes it. */
async function rawExchange(port: number, text: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  socket.on('error', () => undefined); // the server may close while we still write
  socket.write(text);
  await once(socket, 'close');
  return received;
}

describe('the webhook on node:http', () => {
  it('takes its paths with a query string too, and leaves other methods on them to Fastify (404)', async () => {
    const app = await startApp();
    const body = notificationBody();
    expect((await app.deliver(body, undefined, '/webhooks/collection?source=bank')).reply.responseCode).toBe('00');
    const get = await request(`${app.baseUrl}/webhooks/collection`);
    await get.body.dump();
    expect(get.statusCode).toBe(404);
    const other = await request(`${app.baseUrl}/webhooks/collection/extra`, { method: 'POST', headers: signedHeaders(), body: '{}' });
    await other.body.dump();
    expect(other.statusCode).toBe(404);
  });

  it('refuses a chunked body once it passes WEBHOOK_MAX_BODY_BYTES (64 KiB) with 413 and the 02 reply, closes the connection and stores nothing', async () => {
    const store = await openMemoryStore();
    const app = await startApp({}, { store });
    const headers = Object.entries(signedHeaders())
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const chunk = 'x'.repeat(16 * 1024);
    const chunks = Array.from({ length: 6 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    const received = await rawExchange(
      Number(new URL(app.baseUrl).port),
      `POST /webhooks/collection HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}transfer-encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`,
    );
    expect(received.slice(0, 12)).toBe('HTTP/1.1 413');
    expect(received.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toMatchObject({
      responseCode: '02',
      responseMessage: 'rejected transaction',
    });
    expect(await store.listNewestFirst({ limit: 1 })).toEqual([]);
  });

  it('refuses a source outside WEBHOOK_ALLOWED_IPS from the headers alone, answering before the body has arrived', async () => {
    const store = await openMemoryStore();
    const app = await startApp({ WEBHOOK_ALLOWED_IPS: '203.0.113.0/24' }, { store });
    const socket = connect(Number(new URL(app.baseUrl).port), '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    const closed = once(socket, 'close');
    // A body of 1 MiB is declared and 10 bytes of it sent: the reply cannot depend on the rest.
    const headers = Object.entries(signedHeaders())
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`POST /webhooks/collection HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}content-length: ${1024 * 1024}\r\n\r\n{"sessionI`);
    await closed;
    expect(received.slice(0, 12)).toBe('HTTP/1.1 200');
    expect(received.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toEqual({
      requestSuccessful: true,
      sessionId: '',
      responseMessage: 'rejected transaction',
      responseCode: '02',
    });
    expect(await store.listNewestFirst({ limit: 1 })).toEqual([]);
  });

  it('reads the body of a delivery refused for its signature to echo its sessionId, and answers once it has all of it', async () => {
    const store = await openMemoryStore();
    const { logger, logged } = captureLogs();
    const app = await startApp({}, { store, logger });
    const socket = connect(Number(new URL(app.baseUrl).port), '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    const replied = Promise.withResolvers<void>();
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (received.includes('}')) replied.resolve();
    });
    socket.on('error', () => undefined);
    // A valid notification but for a 9-digit account: parsed, it would be refused for that instead.
    const payload = JSON.stringify(notificationBody({ sessionId: 'S-echo', accountNumber: '012345678' }));
    const headers = Object.entries(signedHeaders('someone-else', 'not-the-secret'))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(
      `POST /webhooks/collection HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}content-length: ${Buffer.byteLength(payload)}\r\n\r\n`,
    );
    // The sessionId arrives in the second part: a reply sent before it could not echo it.
    socket.write(payload.slice(0, 10));
    socket.write(payload.slice(10));
    await replied.promise;
    socket.destroy();
    expect(received.slice(0, 12)).toBe('HTTP/1.1 200');
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toEqual({
      requestSuccessful: true,
      sessionId: 'S-echo',
      responseMessage: 'rejected transaction',
      responseCode: '02',
    });
    expect(await logged((line) => line.responseCode === '02')).toMatchObject({ reason: 'bad_signature', sessionId: 'S-echo' });
    expect(await store.listNewestFirst({ limit: 1 })).toEqual([]);
  });

  it('costs an unsigned sender of the largest body no more than it chose: 256 characters of its sessionId echoed, one short log line', async () => {
    const { logger, lines } = capturingLogger();
    const app = await startApp({}, { logger });
    const sessionId = 'S'.repeat(50_000);
    const head = `{"sessionId":"${sessionId}","tranRemarks":"`;
    const body = `${head}${'x'.repeat(64 * 1024 - head.length - 2)}"}`;
    expect(Buffer.byteLength(body)).toBe(64 * 1024);
    const { status, reply } = await app.deliver(body, signedHeaders('someone-else', 'not-the-secret'));
    expect(status).toBe(200);
    expect(reply).toEqual({
      requestSuccessful: true,
      sessionId: sessionId.slice(0, 256),
      responseMessage: 'rejected transaction',
      responseCode: '02',
    });
    const line = await lines.first((text) => text.includes('"bad_signature"'));
    expect(line.length).toBeLessThan(1_024);
    expect(lines.filter((text) => text.includes('SSSS'))).toEqual([line]);
  });

  it('echoes the sessionId of an unsigned body without parsing the rest of it', async () => {
    const app = await startApp();
    const { reply } = await app.deliver(
      '{"sessionId": "S-early", "accountNumber": this is not JSON',
      signedHeaders('someone-else', 'not-the-secret'),
    );
    expect(reply).toMatchObject({ sessionId: 'S-early', responseCode: '02' });
  });

  it('refuses a bad signature on a body over WEBHOOK_MAX_BODY_BYTES with 413, echoing no sessionId, without reading the rest', async () => {
    const { logger, logged } = captureLogs();
    const app = await startApp({ WEBHOOK_MAX_BODY_BYTES: '2048' }, { logger });
    const garbage = `{"sessionId":"S-1",${'x'.repeat(4096)}`;
    const received = await rawExchange(
      Number(new URL(app.baseUrl).port),
      `POST /webhooks/collection HTTP/1.1\r\nhost: 127.0.0.1\r\nclient-id: someone-else\r\nx-auth-signature: 00\r\ncontent-length: ${Buffer.byteLength(garbage)}\r\n\r\n${garbage}`,
    );
    expect(received.slice(0, 12)).toBe('HTTP/1.1 413');
    expect(received.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toMatchObject({ responseCode: '02', sessionId: '' });
    expect(await logged((line) => line.responseCode === '02')).toMatchObject({ reason: 'bad_signature' });
  });

  it('stores nothing from a delivery whose sender hangs up before the declared length, and goes on serving', async () => {
    const store = await openMemoryStore();
    const { logger, logged } = captureLogs();
    const app = await startApp({}, { store, logger });
    const socket = connect(Number(new URL(app.baseUrl).port), '127.0.0.1');
    await once(socket, 'connect');
    // The whole notification, valid JSON on its own, but 10 bytes short of the length declared: a
    // route that read it as complete when the sender left would store it.
    const unfinished = notificationBody();
    const payload = JSON.stringify(unfinished);
    const headers = Object.entries(signedHeaders())
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const request = `POST /webhooks/collection HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}content-length: ${Buffer.byteLength(payload) + 10}\r\n\r\n${payload}`;
    // Handed to the kernel, which sends it before the close: the server reads every byte, then the end.
    await new Promise((resolve) => socket.write(request, resolve));
    socket.destroy();
    await logged((line) => String(line.msg).includes('hung up before the body ended'));
    const next = notificationBody();
    expect((await app.deliver(next)).reply.responseCode).toBe('00');
    expect((await store.listNewestFirst({ limit: 5 })).map((n) => n.settlementId)).toEqual([next.settlementId]);
    expect(await store.getMany([unfinished.settlementId])).toEqual([null]);
  });

  it('answers 503 and closes the connection to a delivery that arrives while the server drains', async () => {
    const store = await openMemoryStore();
    const insert = holdCalls(store, 'insert');
    const app = await startApp({}, { store: insert.target });
    const port = Number(new URL(app.baseUrl).port);
    const post = (body: Record<string, unknown>) => {
      const payload = JSON.stringify(body);
      const headers = Object.entries(signedHeaders())
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      return `POST /webhooks/collection HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}content-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`;
    };
    // Another delivery, its headers begun before the first below: the server is inside it when the drain begins.
    const other = notificationBody();
    const [otherHead, otherPayload] = post(other).split('\r\n\r\n') as [string, string];
    const otherDelivery = await beginRequest(port, otherHead);
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const closed = once(socket, 'close');
    const first = notificationBody();
    const late = notificationBody();
    socket.write(post(first));
    await insert.reached;
    const draining = app.app.close();
    // Pipelined behind the delivery still being written, on the connection that stayed open.
    await new Promise((resolve) => socket.write(post(late), resolve));
    // Refused by the edge too; its answer comes once the server has read the pipelined delivery, so the write may end.
    expect(await otherDelivery.finish(otherPayload)).toMatch(/^HTTP\/1\.1 503 [^]*connection: close/i);
    insert.release();
    await closed;
    await draining;
    const responses = received.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(responses.map((r) => r.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 503']);
    expect(responses[0]).toContain('"responseCode":"00"');
    expect(responses[1]!.toLowerCase()).toContain('connection: close');
    const stored = await store.getMany([first.settlementId, late.settlementId, other.settlementId]);
    expect(stored.map((n) => n?.settlementId ?? null)).toEqual([first.settlementId, null, null]);
  });

  it('times each delivery under its route in http_request_duration_seconds, and logs it with a request id', async () => {
    const { logger, logged } = captureLogs();
    const app = await startApp({}, { logger });
    const body = notificationBody();
    await app.deliver(body);
    await app.deliver({}, { 'client-id': 'someone-else' }, '/v1/webhook');
    const counted = (route: string) => scrapeSum(app, 'http_request_duration_seconds_count', { method: 'POST', route, status_code: '200' });
    expect(await counted('/webhooks/collection')).toBe(1);
    expect(await counted('/v1/webhook')).toBe(1);
    const delivered = await logged((line) => line.settlementId === body.settlementId);
    expect(delivered).toMatchObject({ responseCode: '00', reason: 'accepted', reqId: expect.stringMatching(/^webhook-/) });
    const refused = await logged((line) => line.reason === 'bad_signature');
    expect(refused.reqId).not.toBe(delivered.reqId);
  });
});
