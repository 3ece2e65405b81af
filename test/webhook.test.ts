import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';
import type { NotificationStore } from '../src/store/types.ts';
import { notificationBody, signedHeaders, startApp } from './helpers/app.ts';
import { withMethod } from './helpers/proxy.ts';
import { openMemoryStore, urlStoreBackends } from './helpers/stores.ts';

const NOTIFICATION_FIELDS = `settlementId sessionId accountNumber transactionAmount settledAmount feeAmount vatAmount
  currency narration initiationTranRef sourceAccountNumber sourceAccountName sourceBankName channelId
  transactionTime receivedAt cursor rawBody rawBodyBase64`;

const reply = (code: string, message: string, sessionId: unknown) => ({
  requestSuccessful: true,
  sessionId,
  responseMessage: message,
  responseCode: code,
});

describe.each(urlStoreBackends.filter((backend) => backend.enabled))('collection webhook on $name', (backend) => {
  async function start(env: Record<string, string> = {}) {
    const store = await backend.create();
    const app = await startApp({ STORE_URL: store.storeUrl, ...env });
    const stored = async (settlementId: unknown) =>
      (await app.query(`query($id: ID!) { collectionNotification(settlementId: $id) { ${NOTIFICATION_FIELDS} } }`, { id: settlementId }))
        .data!.collectionNotification;
    return { ...app, store, stored };
  }

  it('replies 00 to a valid delivery, echoing sessionId, once it is stored and normalised', async () => {
    const { deliver, stored } = await start();
    const body = notificationBody({ initiationTranRef: '', sourceAccountName: 'null', tranRemarks: 'Order #1043 — ₦' });
    const raw = JSON.stringify(body, null, 2);
    const { status, reply: answer } = await deliver(raw);
    expect(status).toBe(200);
    expect(answer).toEqual(reply('00', 'success', body.sessionId));

    const notification = await stored(body.settlementId);
    expect(notification).toMatchObject({
      settlementId: body.settlementId,
      sessionId: body.sessionId,
      accountNumber: '0123456789',
      transactionAmount: '1500.00',
      settledAmount: '1489.25',
      feeAmount: '10.00',
      vatAmount: '0.75',
      currency: 'NGN',
      narration: 'Order #1043 — ₦',
      initiationTranRef: null,
      sourceAccountName: null,
      transactionTime: '2026-11-22T14:05:09+01:00',
      rawBody: raw,
      rawBodyBase64: Buffer.from(raw, 'utf8').toString('base64'),
    });
    expect(notification.receivedAt).toMatch(/(Z|[+-]\d{2}:\d{2})$/);
  });

  it('keeps a body that is not UTF-8 byte for byte: a Latin-1 byte comes back exactly in rawBodyBase64', async () => {
    const { deliver, stored } = await start();
    const body = notificationBody({ sourceAccountName: 'JOS\u00c9', tranRemarks: 'Caf\u00e9' });
    // The bank's text in Latin-1: É and é are one byte each, which UTF-8 cannot read.
    const bytes = Buffer.from(JSON.stringify(body), 'latin1');
    expect(bytes.includes(0xe9)).toBe(true);
    expect((await deliver(bytes)).reply.responseCode).toBe('00');
    const notification = await stored(body.settlementId);
    expect(Buffer.from(notification.rawBodyBase64, 'base64')).toEqual(bytes);
    expect(notification.rawBody).toBe(bytes.toString('utf8'));
    expect(notification).toMatchObject({ narration: 'Caf\ufffd', sourceAccountName: 'JOS\ufffd' });
    // The bank's retry of the same bytes is the same notification.
    expect((await deliver(bytes)).reply.responseCode).toBe('01');
  });

  it('accepts the alias path /v1/webhook', async () => {
    const { deliver, stored } = await start();
    const body = notificationBody();
    expect((await deliver(body, undefined, '/v1/webhook')).reply.responseCode).toBe('00');
    expect(await stored(body.settlementId)).not.toBeNull();
  });

  it('replies 01 to a settlementId already stored, and keeps the first', async () => {
    const { deliver, stored } = await start();
    const body = notificationBody();
    await deliver(body);
    const again = await deliver({ ...body, sessionId: 'second-session', transactionAmount: '9999.00' });
    expect(again.reply).toEqual(reply('01', 'duplicate transaction', 'second-session'));
    expect((await stored(body.settlementId)).transactionAmount).toBe('1500.00');
  });

  it('accepts the signature in lower-case hex too', async () => {
    const { deliver } = await start();
    const headers = signedHeaders();
    headers['x-auth-signature'] = headers['x-auth-signature']!.toLowerCase();
    expect((await deliver(notificationBody(), headers)).reply.responseCode).toBe('00');
  });

  const signatureCases: [string, () => Record<string, string>][] = [
    ['a signature made with another secret', () => signedHeaders(sandboxCredentials.webhookClientId, 'not-the-secret')],
    [
      'a Client-Id other than the configured one, signed for itself',
      () => signedHeaders('someone-else', sandboxCredentials.webhookClientSecret),
    ],
    ['no X-Auth-Signature', () => ({ 'content-type': 'application/json', 'client-id': sandboxCredentials.webhookClientId })],
    ['no Client-Id', () => ({ 'content-type': 'application/json', 'x-auth-signature': signedHeaders()['x-auth-signature']! })],
    [
      'a SHA-256 instead of SHA-512 signature',
      () => ({
        ...signedHeaders(),
        'x-auth-signature': createHash('sha256')
          .update(`${sandboxCredentials.webhookClientId}:${sandboxCredentials.webhookClientSecret}`)
          .digest('hex'),
      }),
    ],
  ];
  it.each(signatureCases)('replies 02 to %s, echoing its sessionId, and stores nothing', async (_name, headers) => {
    const { deliver, store } = await start();
    const body = notificationBody();
    expect((await deliver(body, headers())).reply).toEqual(reply('02', 'rejected transaction', body.sessionId));
    expect(await store.countRows()).toBe(0);
  });

  const bodyCases: [string, string | Record<string, unknown>, string][] = [
    ['a body that is not JSON', '{"accountNumber": "0123456789", ', ''],
    ['a JSON array', '[{"accountNumber":"0123456789"}]', ''],
    ['an account number of 9 digits', notificationBody({ sessionId: 's-1', accountNumber: '012345678' }), 's-1'],
    ['a missing account number', notificationBody({ sessionId: 's-2', accountNumber: undefined }), 's-2'],
    ['a missing settlementId', notificationBody({ sessionId: 's-3', settlementId: undefined }), 's-3'],
    ['an empty settlementId', notificationBody({ sessionId: 's-4', settlementId: '  ' }), 's-4'],
    ['a negative amount', notificationBody({ sessionId: 's-5', transactionAmount: '-1500.00' }), 's-5'],
    ['an amount with a thousands separator', notificationBody({ sessionId: 's-6', transactionAmount: '1,500.00' }), 's-6'],
    ['an amount in exponent form', notificationBody({ sessionId: 's-7', transactionAmount: '1.5e3' }), 's-7'],
    ['an amount sent as a JSON number', notificationBody({ sessionId: 's-8', transactionAmount: 1500.1 }), 's-8'],
    // Deliveries the store could never hold: refused on arrival, never 03 on every retry.
    ['a settlementId of 65 characters', notificationBody({ sessionId: 's-9', settlementId: '9'.repeat(65) }), 's-9'],
    ['a settlementId of 6,000 characters', notificationBody({ sessionId: 's-10', settlementId: 'S'.repeat(6_000) }), 's-10'],
    ['an amount of 19 digits before its point', notificationBody({ sessionId: 's-11', transactionAmount: `${'9'.repeat(19)}.00` }), 's-11'],
    ['an amount of 60,000 digits', notificationBody({ sessionId: 's-12', transactionAmount: '1'.repeat(60_000) }), 's-12'],
    ['a settled amount of 60,000 digits', notificationBody({ sessionId: 's-13', settledAmount: '1'.repeat(60_000) }), 's-13'],
    ['a fee of 19 digits after its point', notificationBody({ sessionId: 's-14', feeAmount: `0.${'1'.repeat(19)}` }), 's-14'],
  ];
  it.each(bodyCases)('replies 02 to %s and stores nothing', async (_name, body, sessionId) => {
    const { deliver, store } = await start();
    expect((await deliver(body)).reply).toEqual(reply('02', 'rejected transaction', sessionId));
    expect(await store.countRows()).toBe(0);
  });

  it('stores the longest settlementId and the largest amounts it takes, and sums them exactly', async () => {
    // Confirmation off: the sandbox bank never made this transfer, and a summary leaves out what it refutes.
    const { deliver, stored, query } = await start({ COLLECTION_CONFIRMATION: 'off' });
    const whole = '9'.repeat(18);
    const body = notificationBody({
      settlementId: '7'.repeat(64),
      transactionAmount: `${whole}.${'9'.repeat(18)}`,
      feeAmount: `${whole}.5`,
    });
    expect((await deliver(body)).reply.responseCode).toBe('00');
    expect(await stored(body.settlementId)).toMatchObject({
      settlementId: body.settlementId,
      transactionAmount: body.transactionAmount,
      feeAmount: body.feeAmount,
    });
    const { data } = await query(
      'query($a: String!) { collectionSummary(accountNumber: $a, from: "2026-11-22T00:00:00+01:00", to: "2026-11-23T00:00:00+01:00") { count transactionAmount feeAmount } }',
      { a: body.accountNumber },
    );
    expect(data!.collectionSummary).toEqual({ count: 1, transactionAmount: body.transactionAmount, feeAmount: `${whole}.50` });
  });

  it('reads blank and "null" optional fields as null and an unreadable time as null, still 00', async () => {
    const { deliver, stored } = await start();
    const body = notificationBody({ feeAmount: '', vatAmount: 'null', currency: ' ', channelId: 'NULL', tranDateTime: '22nd Nov' });
    expect((await deliver(body)).reply.responseCode).toBe('00');
    expect(await stored(body.settlementId)).toMatchObject({
      feeAmount: null,
      vatAmount: null,
      currency: null,
      channelId: null,
      transactionTime: null,
    });
  });

  it.each([
    ['year 0', '0000-01-01 00:00:00'],
    ['year 10000', '10000-01-01 00:00:00'],
  ])('stores a bank time in %s as null, 00 and then 01 on the retry, as on every store', async (_name, tranDateTime) => {
    const { deliver, stored } = await start();
    const body = notificationBody({ tranDateTime });
    expect((await deliver(body)).reply.responseCode).toBe('00');
    expect((await deliver(body)).reply.responseCode).toBe('01');
    expect(await stored(body.settlementId)).toMatchObject({ settlementId: body.settlementId, transactionTime: null });
  });

  it('reads tranDateTime in the M/D/YYYY h:mm:ss AM form and with milliseconds', async () => {
    const { deliver, stored } = await start();
    const us = notificationBody({ tranDateTime: '11/22/2026 2:05:09 PM' });
    const ms = notificationBody({ tranDateTime: '2026-11-22 09:30:00.250' });
    await deliver(us);
    await deliver(ms);
    expect((await stored(us.settlementId)).transactionTime).toBe('2026-11-22T14:05:09+01:00');
    expect((await stored(ms.settlementId)).transactionTime).toBe('2026-11-22T09:30:00.250+01:00');
  });

  it('refuses a body over WEBHOOK_MAX_BODY_BYTES (64 KiB by default) with 413 and stores nothing, and takes one of exactly that size', async () => {
    const { deliver, store } = await start();
    /** A valid notification of exactly `bytes` bytes, its narration padding it. */
    const sized = (bytes: number) => {
      const body = notificationBody({ tranRemarks: '' });
      const text = JSON.stringify(body);
      return { body, text: text.replace('"tranRemarks":""', `"tranRemarks":"${'x'.repeat(bytes - Buffer.byteLength(text))}"`) };
    };
    const over = sized(64 * 1024 + 1);
    expect((await deliver(over.text)).status).toBe(413);
    expect(await store.countRows()).toBe(0);
    const largest = sized(64 * 1024);
    expect(Buffer.byteLength(largest.text)).toBe(64 * 1024);
    expect((await deliver(largest.text)).reply.responseCode).toBe('00');
    expect(await store.countRows()).toBe(1);
  });

  it('replies 03 when the store cannot commit, stores nothing, and 00 to the retry once it recovers', async () => {
    const { deliver, store, stored } = await start();
    const body = notificationBody();
    await store.breakInserts();
    expect((await deliver(body)).reply).toEqual(reply('03', 'the service failure, retry', body.sessionId));
    expect(await store.countRows()).toBe(0);
    await store.repairInserts();
    expect((await deliver(body)).reply.responseCode).toBe('00');
    expect((await stored(body.settlementId)).settlementId).toBe(body.settlementId);
  });
});

describe('collection webhook on an internal fault', () => {
  it('replies 03 (so the bank retries) when something other than the commit fails inside the route', async () => {
    const store = await openMemoryStore();
    // A store that answers nonsense: the route cannot tell what happened, so it must not say 00 or 02.
    const broken = withMethod(store, 'insert', (async () => undefined) as unknown as NotificationStore['insert']);
    const { deliver } = await startApp({}, { store: broken });
    const body = notificationBody();
    const { status, reply: answer } = await deliver(body);
    expect(status).toBe(200);
    expect(answer).toEqual(reply('03', 'the service failure, retry', body.sessionId));
  });
});
