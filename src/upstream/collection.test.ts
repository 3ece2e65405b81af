import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startFakeBank } from '../../test/helpers/fake-bank.ts';
import { SAMPLE_TRANSFER, startFakeCollectionBank, type FakeCollectionBank } from '../../test/helpers/fake-collection-bank.ts';
import { lastReceived, postJson, startRecordedSandbox, useRecordedSandbox } from '../../test/helpers/sandbox.ts';
import {
  createTestClients,
  expectNoLeak,
  expectUpstreamError,
  sandboxCollectionCredentials,
  sandboxSecrets,
  testCollectionCredentials,
  testSecrets,
  urlsAt,
} from '../../test/helpers/bank-clients.ts';
import { Inbox } from '../../test/helpers/wait.ts';
import { createBankBudget } from '../limits/bank-budget.ts';
import { sandboxCredentials } from '../sandbox/credentials.ts';
import { Secret } from '../secret.ts';
import { defaultBreakerOptions } from './resilience.ts';

// SHA-512 of "partner-7:shh", upper-case hex, computed outside this code (`printf 'partner-7:shh' | sha512sum`).
const PARTNER_7_SIGNATURE =
  '92CD0D2A2D2373A1A8F25C05100E2F6C3E6B4276EEF7AF25F85EF05996E816BBAAADFE1F5B5CE0AA1625989313EF30EEE08B02682CFEF4CD5013DA94649BD29C';

/** The bank's signature of `text`, worked out here apart from the client's. */
const sha512Hex = (text: string) => createHash('sha512').update(text).digest('hex').toUpperCase();

const TRANSFER = SAMPLE_TRANSFER;

describe('collection client against an independent fake (ops 15 to 17)', () => {
  it('op 16: maps the bank record, amounts as their exact text and times with the bank zone offset', async () => {
    const bank = await startFakeCollectionBank();
    bank.know(TRANSFER);
    const { clients } = createTestClients(urlsAt(bank.url));
    const record = await clients.collection.verifyBySettlementId(TRANSFER.settlementId);
    expect(record).toEqual({
      sessionId: TRANSFER.sessionId,
      settlementId: TRANSFER.settlementId,
      accountNumber: '0123456789',
      transactionAmount: '1000.0',
      settledAmount: '955.0',
      feeAmount: '45.0',
      vatAmount: '0.0',
      currency: 'NGN',
      narration: 'Payment for order 1043',
      initiationTranRef: null,
      sourceAccountNumber: '0011223344',
      sourceAccountName: 'CHUKWUEMEKA OBI',
      sourceBankCode: '000013',
      sourceBankName: 'GTBank',
      channelId: '1',
      transactionTime: '2026-11-22T14:05:09+01:00',
      settledAt: '2026-11-22T14:05:41+01:00',
      acknowledged: true,
      raw: expect.objectContaining({ transactionAmount: '1000.0', stamp_duty_flg: 0, notification_acknowledgement: 1 }),
      rawBody: expect.stringContaining('"transactionAmount":1000.0,'),
    });
    const [request] = bank.received;
    expect(request).toMatchObject({ operation: 'verifyBySettlementId', id: TRANSFER.settlementId, signed: true, body: '' });
  });

  it('op 15: reads an amount no float can hold exactly as the bank wrote it', async () => {
    const bank = await startFakeCollectionBank();
    bank.know({ ...TRANSFER, transactionAmount: '99999999999999.99', settledAmount: '99999999999954.99' });
    const { clients } = createTestClients(urlsAt(bank.url));
    const record = await clients.collection.verifyBySessionId(TRANSFER.sessionId);
    expect(record?.rawBody).toContain('"transactionAmount":99999999999999.99,');
    expect(record).toMatchObject({ transactionAmount: '99999999999999.99', settledAmount: '99999999999954.99' });
    expect(record?.raw).toMatchObject({ transactionAmount: '99999999999999.99' });
    expect(bank.received[0]).toMatchObject({ operation: 'verifyBySessionId', id: TRANSFER.sessionId });
  });

  it('op 16: reads an amount a Java writer sends with an exponent as its exact digits', async () => {
    const bank = await startFakeCollectionBank();
    bank.know({ ...TRANSFER, transactionAmount: '1.0E7', settledAmount: '9.9999955E6', feeAmount: '4.5E1' });
    const { clients } = createTestClients(urlsAt(bank.url));
    const record = await clients.collection.verifyBySettlementId(TRANSFER.settlementId);
    expect(record?.rawBody).toContain('"transactionAmount":1.0E7,');
    expect(record).toMatchObject({ transactionAmount: '10000000', settledAmount: '9999995.5', feeAmount: '45' });
  });

  it('takes amounts sent as strings, blanks and "null" as absent, and ignores fields it does not know', async () => {
    const bank = await startFakeCollectionBank();
    bank.know({
      ...TRANSFER,
      amountsAs: 'strings',
      feeAmount: '',
      channelId: ' ',
      sourceAccountName: 'null',
      sourceBankCode: '',
      currency: 'NULL',
      tranDateTime: 'yesterday',
      notification_acknowledgement: 0,
      extra: { reversalFlag: 'N', batch: { id: 7 } },
    });
    const { clients } = createTestClients(urlsAt(bank.url));
    const record = await clients.collection.verifyBySettlementId(TRANSFER.settlementId);
    expect(record).toMatchObject({
      transactionAmount: '1000.0',
      feeAmount: null,
      channelId: null,
      sourceAccountName: null,
      sourceBankCode: null,
      currency: null,
      transactionTime: null,
      acknowledged: false,
    });
    expect(record?.raw).toMatchObject({ reversalFlag: 'N', batch: { id: 7 } });
  });

  it('gives null for the bank\'s "Transaction not found!!!" answer', async () => {
    const bank = await startFakeCollectionBank();
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.collection.verifyBySettlementId('NEVER-SENT')).resolves.toBeNull();
    await expect(clients.collection.verifyBySessionId('NEVER-SENT')).resolves.toBeNull();
    expect(bank.calls()).toBe(2);
  });

  it('signs every call with Client-Id and the upper-case hex SHA-512 of "<Client-Id>:<secret>"', async () => {
    const bank = await startFakeCollectionBank({ clientId: 'partner-7', clientSecret: 'shh' });
    bank.know(TRANSFER);
    const collectionCredentials = { clientId: 'partner-7', clientSecret: new Secret('shh') };
    const { clients } = createTestClients(urlsAt(bank.url), { collectionCredentials });
    await clients.collection.verifyBySettlementId(TRANSFER.settlementId);
    await clients.collection.repush({ settlementId: TRANSFER.settlementId });
    for (const request of bank.received) {
      expect(request.headers).toMatchObject({ 'client-id': 'partner-7', 'x-auth-signature': PARTNER_7_SIGNATURE });
    }
    expect(bank.received[1]!.headers['content-type']).toBe('application/json');
  });

  it.each([
    [401, 'UPSTREAM_UNAUTHORIZED'],
    [403, 'UPSTREAM_UNAUTHORIZED'],
    [400, 'UPSTREAM_BAD_REQUEST'],
    [500, 'UPSTREAM_UNAVAILABLE'],
    [503, 'UPSTREAM_UNAVAILABLE'],
  ] as const)('maps HTTP %i to %s, leaking neither secret nor signature', async (status, code) => {
    const bank = await startFakeCollectionBank();
    bank.answer(TRANSFER.settlementId, { status, body: { requestSuccessful: false, responseMessage: 'Refused' } });
    const { clients, logs } = createTestClients(urlsAt(bank.url));
    const error = await expectUpstreamError(clients.collection.verifyBySettlementId(TRANSFER.settlementId), code);
    expect(error.extensions.responseMessage).toBe('Refused');
    // Neither the secret nor the signature made from it (any 128 hex digits) in the log.
    expectNoLeak(JSON.stringify(logs), Object.values(testSecrets));
    expect(JSON.stringify(logs)).not.toMatch(/[0-9A-F]{128}/i);
  });

  it.each([
    ['an HTML page', { text: '<html>Gateway</html>', contentType: 'text/html' }],
    ['a JSON array', { text: '[]', contentType: 'application/json' }],
    [
      'an amount whose exponent goes past any amount',
      { text: '{"settlementId":"S-9","sessionId":"N-9","accountNumber":"0123456789","transactionAmount":1e400}' },
    ],
    ['a negative amount', { text: '{"settlementId":"S-9","sessionId":"N-9","accountNumber":"0123456789","transactionAmount":"-5.00"}' }],
    ['a record without an account', { text: '{"settlementId":"S-9","sessionId":"N-9","transactionAmount":5.0}' }],
    [
      'a record about another transfer',
      { text: '{"settlementId":"S-OTHER","sessionId":"N-9","accountNumber":"0123456789","transactionAmount":5.0}' },
    ],
  ])('calls %s an invalid response', async (_what, answer) => {
    const bank = await startFakeCollectionBank();
    bank.answer('S-9', answer);
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.collection.verifyBySettlementId('S-9'), 'UPSTREAM_INVALID_RESPONSE');
  });

  it('retries ops 15 and 16 after a 503 or a reset, within the call', async () => {
    const bank = await startFakeCollectionBank();
    bank.know(TRANSFER);
    bank.answer(TRANSFER.settlementId, { status: 503 }, 'known');
    bank.answer(TRANSFER.sessionId, 'reset', 'known');
    const { clients, metrics } = createTestClients(urlsAt(bank.url));
    await expect(clients.collection.verifyBySettlementId(TRANSFER.settlementId)).resolves.toMatchObject({ transactionAmount: '1000.0' });
    await expect(clients.collection.verifyBySessionId(TRANSFER.sessionId)).resolves.toMatchObject({ transactionAmount: '1000.0' });
    expect(bank.calls('verifyBySettlementId')).toBe(2);
    expect(bank.calls('verifyBySessionId')).toBe(2);
    const retried = (await metrics.bankRetries.get()).values.filter(
      (v) => v.labels.area === 'collection' && v.labels.decision === 'retried',
    );
    const operations = retried.map((v): [string, number] => [String(v.labels.operation), v.value]);
    expect(operations.sort(([a], [b]) => a.localeCompare(b))).toEqual([
      ['verifyBySessionId', 1],
      ['verifyBySettlementId', 1],
    ]);
  });

  it('op 17: sends the ids once and reads queued or declined', async () => {
    const bank = await startFakeCollectionBank();
    bank.know(TRANSFER);
    bank.answer('S-DECLINED', { declined: '96', message: 'System malfunction' });
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.collection.repush({ settlementId: TRANSFER.settlementId, sessionId: TRANSFER.sessionId })).resolves.toEqual({
      queued: true,
      responseCode: '00',
      responseMessage: 'Transaction has been queued for repush',
    });
    expect(JSON.parse(bank.received[0]!.body)).toEqual({ settlement_id: TRANSFER.settlementId, session_id: TRANSFER.sessionId });
    await expect(clients.collection.repush({ sessionId: 'N-UNKNOWN' })).resolves.toEqual({
      queued: false,
      responseCode: '25',
      responseMessage: 'Transaction not found',
    });
    expect(JSON.parse(bank.received[1]!.body)).toEqual({ settlement_id: '', session_id: 'N-UNKNOWN' });
    await expect(clients.collection.repush({ settlementId: 'S-DECLINED' })).resolves.toMatchObject({ queued: false, responseCode: '96' });
  });

  it('op 17: is never sent again after a time-out or a 503, since the bank may have queued it', async () => {
    const bank = await startFakeCollectionBank();
    bank.answer('S-SLOW', 'hang');
    bank.answer('S-DOWN', { status: 503 });
    const { clients, metrics } = createTestClients(urlsAt(bank.url), { timeoutMs: 300 });
    await expectUpstreamError(clients.collection.repush({ settlementId: 'S-SLOW' }), 'UPSTREAM_UNAVAILABLE');
    await expectUpstreamError(clients.collection.repush({ settlementId: 'S-DOWN' }), 'UPSTREAM_UNAVAILABLE');
    expect(bank.calls('repush')).toBe(2);
    expect((await metrics.bankRetries.get()).values.filter((v) => v.labels.area === 'collection')).toEqual([]);
  });

  it('shares identical verify calls in flight: one bank call answers both', async () => {
    const bank = await startFakeCollectionBank();
    bank.know(TRANSFER);
    const release = Promise.withResolvers<void>();
    bank.answer(TRANSFER.settlementId, { after: release.promise, answer: 'known' });
    const { clients, metrics } = createTestClients(urlsAt(bank.url));
    const first = clients.collection.verifyBySettlementId(TRANSFER.settlementId);
    const second = clients.collection.verifyBySettlementId(TRANSFER.settlementId);
    await bank.received.atLeast(1);
    release.resolve();
    expect(await first).toEqual(await second);
    expect(bank.calls()).toBe(1);
    const shared = (await metrics.bankSharedReads.get()).values.find((v) => v.labels.area === 'collection');
    expect(shared).toMatchObject({ labels: { operation: 'verifyBySettlementId' }, value: 1 });
  });

  it('has a circuit breaker of its own: open, it refuses without calling, and other areas go on', async () => {
    const bank = await startFakeCollectionBank();
    bank.answerEvery({ status: 503 });
    const { clients, metrics } = createTestClients(urlsAt(bank.url));
    // The production threshold: that many failed calls in the window open it.
    for (let i = 0; i < defaultBreakerOptions.volumeThreshold; i += 1)
      await expectUpstreamError(clients.collection.verifyBySettlementId(`S-${i}`), 'UPSTREAM_UNAVAILABLE');
    const open = (await metrics.bankCircuitOpen.get()).values.find((v) => v.labels.area === 'collection');
    expect(open?.value).toBe(1);
    const reached = bank.calls();
    await expectUpstreamError(clients.collection.repush({ settlementId: 'S-LAST' }), 'UPSTREAM_UNAVAILABLE');
    expect(bank.calls()).toBe(reached);
    // The account area's breaker is its own: its call still reaches the bank (which has no such path).
    await clients.account.listBanks().catch(() => undefined);
    expect(bank.calls('other')).toBeGreaterThan(0);
  });

  it('counts each call in bank_upstream_request_duration_seconds by area and operation', async () => {
    const bank = await startFakeCollectionBank();
    const { clients, metrics } = createTestClients(urlsAt(bank.url));
    await clients.collection.verifyBySessionId('N-1');
    await clients.collection.repush({ settlementId: 'S-1' });
    const counts = (await metrics.upstreamRequestDuration.get()).values.filter((v) => v.metricName?.endsWith('_count'));
    expect(counts.map((v) => [v.labels.area, v.labels.operation, v.labels.outcome, v.value])).toEqual([
      ['collection', 'verifyBySessionId', 'ok', 1],
      ['collection', 'repush', 'ok', 1],
    ]);
  });

  it("spends one of the operation's bank calls per call, and refuses past the budget without calling", async () => {
    const bank = await startFakeCollectionBank();
    const { clients } = createTestClients(urlsAt(bank.url));
    const budget = createBankBudget(clients, 1);
    await budget.bank.collection.verifyBySettlementId('S-1');
    const error = await budget.bank.collection.verifyBySessionId('N-1').catch((e: unknown) => e);
    expect((error as { extensions?: { code?: string } }).extensions?.code).toBe('COST_ACTUAL_TOO_EXPENSIVE');
    expect(bank.calls()).toBe(1);
  });

  it('refuses an empty id and a repush without ids before calling the bank', async () => {
    const bank = await startFakeCollectionBank();
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.collection.verifyBySettlementId(' ')).rejects.toMatchObject({
      extensions: { code: 'BAD_USER_INPUT', argumentName: 'settlementId' },
    });
    await expect(clients.collection.verifyBySessionId('')).rejects.toMatchObject({
      extensions: { code: 'BAD_USER_INPUT', argumentName: 'sessionId' },
    });
    await expect(clients.collection.repush({})).rejects.toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(bank.calls()).toBe(0);
  });

  it('without BANK_COLLECTION_URL, fails each call as unavailable, naming the variable', async () => {
    const { clients } = createTestClients({ ...urlsAt('http://127.0.0.1:9'), collection: undefined });
    for (const call of [
      clients.collection.verifyBySettlementId('S-1'),
      clients.collection.verifyBySessionId('N-1'),
      clients.collection.repush({ settlementId: 'S-1' }),
    ]) {
      const error = await expectUpstreamError(call, 'UPSTREAM_UNAVAILABLE');
      expect(error.message).toContain('BANK_COLLECTION_URL');
    }
  });
});

describe('collection client against the sandbox bank (ops 15 to 17)', () => {
  const sandbox = useRecordedSandbox();
  const clientsFor = () => createTestClients(sandbox().urls, { collectionCredentials: sandboxCollectionCredentials }).clients;
  /** A transfer made on the sandbox bank's console, never delivered (no webhook is needed). */
  const lostTransfer = async (amount: string) => {
    const answer = await postJson(`${sandbox().collection.consoleUrl}/transfers`, { accountNumber: '0123456789', amount, lost: true });
    expect(answer.status).toBe(201);
    return answer.json as { settlementId: string; sessionId: string; notification: Record<string, string> };
  };

  it('op 16: reads the transfer the bank made, amounts as the bank writes them, with the signed headers', async () => {
    const made = await lostTransfer('1500.00');
    const record = await clientsFor().collection.verifyBySettlementId(made.settlementId);
    expect(record).toMatchObject({
      settlementId: made.settlementId,
      sessionId: made.sessionId,
      accountNumber: '0123456789',
      transactionAmount: '1500.0',
      settledAmount: '1500.0',
      feeAmount: '0.0',
      vatAmount: '0.0',
      currency: 'NGN',
      initiationTranRef: null,
      sourceBankCode: '000013',
      acknowledged: false,
    });
    expect(record?.transactionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+01:00$/);
    expect(record?.settledAt).toBe(record?.transactionTime);
    const request = lastReceived(sandbox(), '/PiPverifyTransaction_settlementid');
    expect(request).toMatchObject({
      method: 'GET',
      path: '/collection/PiPverifyTransaction_settlementid',
      query: { settlement_id: made.settlementId },
    });
    expect(request.headers).toMatchObject({
      'client-id': sandboxCredentials.webhookClientId,
      'x-auth-signature': sandbox().fingerprint(
        '2CB548A603CA3F36E9FE22858492B9C579259A71D56B93DAD20459C0ABAB35C0E571DBE1E66363D11AF10393B5A0DE04D20D0293DF0D63B3ABEF0D15193282FF',
      ),
      accept: 'application/json',
    });
  });

  it('op 15: keeps an amount no float can hold exactly, as the sandbox writes it in the JSON number', async () => {
    const made = await lostTransfer('99999999999999.99');
    const record = await clientsFor().collection.verifyBySessionId(made.sessionId);
    expect(record?.rawBody).toContain('"transactionAmount":99999999999999.99,');
    expect(record).toMatchObject({ settlementId: made.settlementId, transactionAmount: '99999999999999.99' });
  });

  it('gives null for what the bank never sent', async () => {
    await expect(clientsFor().collection.verifyBySettlementId('NEVER-SENT')).resolves.toBeNull();
    await expect(clientsFor().collection.verifyBySessionId('NEVER-SENT')).resolves.toBeNull();
  });

  it('is refused with UPSTREAM_UNAUTHORIZED when the secret is not the one the bank knows', async () => {
    const collectionCredentials = { clientId: sandboxCredentials.webhookClientId, clientSecret: new Secret('not-the-webhook-secret') };
    const { clients } = createTestClients(sandbox().urls, { collectionCredentials });
    await expectUpstreamError(clients.collection.verifyBySettlementId('S-1'), 'UPSTREAM_UNAUTHORIZED', [
      ...sandboxSecrets,
      'not-the-webhook-secret',
    ]);
    await expectUpstreamError(clients.collection.repush({ settlementId: 'S-1' }), 'UPSTREAM_UNAUTHORIZED', [
      ...sandboxSecrets,
      'not-the-webhook-secret',
    ]);
  });

  it('op 17: the bank sends the same signed body again to the webhook, and then holds our 00', async () => {
    const deliveries = new Inbox<{ headers: Record<string, unknown>; body: string }>();
    const webhook = await startFakeBank((request, reply) => {
      deliveries.push({ headers: request.headers, body: request.body });
      reply.json({
        requestSuccessful: true,
        sessionId: JSON.parse(request.body).sessionId,
        responseMessage: 'success',
        responseCode: '00',
      });
    });
    sandbox().collection.deliverTo(`${webhook.url}/webhooks/collection`);
    const made = await lostTransfer('2500.50');
    const clients = clientsFor();
    await expect(clients.collection.repush({ settlementId: made.settlementId })).resolves.toMatchObject({
      queued: true,
      responseCode: '00',
    });
    const [delivery] = await deliveries.atLeast(1);
    expect(JSON.parse(delivery!.body)).toEqual(made.notification);
    expect(delivery!.headers).toMatchObject({ 'client-id': sandboxCredentials.webhookClientId, 'content-type': 'application/json' });
    await expect(clients.collection.verifyBySettlementId(made.settlementId)).resolves.toMatchObject({ acknowledged: true });
    expect(JSON.parse(lastReceived(sandbox(), '/PiP_RepushTransaction_SettlementId').body)).toEqual({
      settlement_id: made.settlementId,
      session_id: '',
    });
    await expect(clients.collection.repush({ sessionId: 'NEVER-SENT' })).resolves.toMatchObject({ queued: false, responseCode: '25' });
  });
});

describe('signed with what the bank accepts, through a rotation (WEBHOOK_CLIENT_SECRET_PREVIOUS)', () => {
  const NEW = 'new-collection-secret-SECRET';
  const OLD = 'old-collection-secret-SECRET';
  const rotating = { clientId: testCollectionCredentials.clientId, clientSecret: new Secret(NEW), previousSecret: new Secret(OLD) };
  const signedWith = (bank: FakeCollectionBank, from: number) => bank.received.slice(from).map((r) => r.signedWith);

  it('asks once more with the previous secret on a 401, keeps it while the bank accepts it, and follows the bank when it switches', async () => {
    const bank = await startFakeCollectionBank({ clientSecret: NEW, previousSecret: OLD });
    bank.know(TRANSFER);
    const { clients, logs } = createTestClients(urlsAt(bank.url), { collectionCredentials: rotating });
    await expect(clients.collection.verifyBySettlementId(TRANSFER.settlementId)).resolves.toMatchObject({ transactionAmount: '1000.0' });
    expect(signedWith(bank, 0)).toEqual(['current', 'previous']);
    // The one that worked is kept: no 401 per call.
    await expect(clients.collection.verifyBySessionId(TRANSFER.sessionId)).resolves.toMatchObject({ transactionAmount: '1000.0' });
    expect(signedWith(bank, 2)).toEqual(['previous']);
    bank.switchSecret();
    await expect(clients.collection.verifyBySettlementId(TRANSFER.settlementId)).resolves.toMatchObject({ transactionAmount: '1000.0' });
    expect(signedWith(bank, 3)).toEqual(['previous', 'current']);
    await expect(clients.collection.repush({ settlementId: TRANSFER.settlementId })).resolves.toMatchObject({ queued: true });
    expect(signedWith(bank, 5)).toEqual(['current']);
    expectNoLeak(JSON.stringify(logs), [NEW, OLD, ...Object.values(testSecrets)]);
    expect(JSON.stringify(logs)).not.toMatch(/[0-9A-F]{128}/i);
  });

  it('op 17: a 401 queued nothing, so it is sent once more with the other secret, and once only', async () => {
    const bank = await startFakeCollectionBank({ clientSecret: NEW, previousSecret: OLD });
    bank.know(TRANSFER);
    const { clients } = createTestClients(urlsAt(bank.url), { collectionCredentials: rotating });
    await expect(clients.collection.repush({ settlementId: TRANSFER.settlementId })).resolves.toMatchObject({ queued: true });
    expect(signedWith(bank, 0)).toEqual(['current', 'previous']);
    expect(bank.calls('repush')).toBe(2);
  });

  it('refused under both: one ask with each, then UPSTREAM_UNAUTHORIZED, naming neither secret', async () => {
    const bank = await startFakeCollectionBank({ clientSecret: 'a-third-secret' });
    const { clients, logs } = createTestClients(urlsAt(bank.url), { collectionCredentials: rotating });
    await expectUpstreamError(clients.collection.verifyBySettlementId(TRANSFER.settlementId), 'UPSTREAM_UNAUTHORIZED', [NEW, OLD]);
    await expectUpstreamError(clients.collection.repush({ settlementId: TRANSFER.settlementId }), 'UPSTREAM_UNAUTHORIZED', [NEW, OLD]);
    const [current, previous] = [NEW, OLD].map((secret) => sha512Hex(`${rotating.clientId}:${secret}`));
    expect(bank.received.map((r) => r.headers['x-auth-signature'])).toEqual([current, previous, current, previous]);
    expectNoLeak(JSON.stringify(logs), [NEW, OLD]);
  });

  it('without a previous secret, a 401 is not asked again', async () => {
    const bank = await startFakeCollectionBank({ clientSecret: NEW, previousSecret: OLD });
    const credentials = { clientId: rotating.clientId, clientSecret: rotating.clientSecret };
    const { clients } = createTestClients(urlsAt(bank.url), { collectionCredentials: credentials });
    await expectUpstreamError(clients.collection.verifyBySettlementId(TRANSFER.settlementId), 'UPSTREAM_UNAUTHORIZED', [NEW, OLD]);
    expect(bank.calls()).toBe(1);
  });

  it('against the sandbox bank still on the previous secret: the answer comes through the previous one', async () => {
    const bank = await startRecordedSandbox({ partner: { clientId: sandboxCredentials.webhookClientId, clientSecret: new Secret(OLD) } });
    const made = await postJson(`${bank.collection.consoleUrl}/transfers`, { accountNumber: '0123456789', amount: '1200.00', lost: true });
    const { settlementId } = made.json as { settlementId: string };
    const collectionCredentials = { ...rotating, clientId: sandboxCredentials.webhookClientId };
    const { clients } = createTestClients(bank.urls, { collectionCredentials });
    await expect(clients.collection.verifyBySettlementId(settlementId)).resolves.toMatchObject({
      settlementId,
      transactionAmount: '1200.0',
    });
    // Refused under the new secret, answered under the old one.
    const sign = (secret: string) => sha512Hex(`${sandboxCredentials.webhookClientId}:${secret}`);
    const asked = bank.received.filter((r) => r.path.endsWith('/PiPverifyTransaction_settlementid'));
    expect(asked.map((r) => r.headers['x-auth-signature'])).toEqual([bank.fingerprint(sign(NEW)), bank.fingerprint(sign(OLD))]);
  });
});

describe('the stand-in bank, as confirmation tests use it', () => {
  it('lags its notifier: not found for as many asks as told, by either id, then the transfer; each ask counted by id', async () => {
    const bank = await startFakeCollectionBank();
    bank.know(TRANSFER);
    bank.lag(TRANSFER.settlementId, { asks: 2 });
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.collection.verifyBySettlementId(TRANSFER.settlementId)).resolves.toBeNull();
    await expect(clients.collection.verifyBySessionId(TRANSFER.sessionId)).resolves.toBeNull();
    await expect(clients.collection.verifyBySettlementId(TRANSFER.settlementId)).resolves.toMatchObject({ sessionId: TRANSFER.sessionId });
    expect([bank.asks(TRANSFER.settlementId), bank.asks(TRANSFER.sessionId), bank.asks('S-OTHER')]).toEqual([2, 1, 0]);
  });

  it('lags for a time: not found until it has passed', async () => {
    const bank = await startFakeCollectionBank();
    bank.know(TRANSFER);
    bank.lag(TRANSFER.settlementId, { ms: 60_000 });
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.collection.verifyBySettlementId(TRANSFER.settlementId)).resolves.toBeNull();
    bank.lag(TRANSFER.settlementId, { ms: 0 });
    await expect(clients.collection.verifyBySettlementId(TRANSFER.settlementId)).resolves.not.toBeNull();
  });

  it('answers slowly when told, and says how many asks it held at once', async () => {
    const bank = await startFakeCollectionBank({ delayMs: 50 });
    const { clients } = createTestClients(urlsAt(bank.url));
    const asks = ['S-1', 'S-2', 'S-3', 'S-4'].map((id) => clients.collection.verifyBySettlementId(id));
    await expect(Promise.all(asks)).resolves.toEqual([null, null, null, null]);
    expect(bank.peakInFlight()).toBe(4);
  });
});
