import { describe, expect, it } from 'vitest';
import { startFakeBank, unusedUrl } from '../../test/helpers/fake-bank.ts';
import { createTestClients, expectNoLeak, expectUpstreamError, urlsAt } from '../../test/helpers/bank-clients.ts';
import { defaultBreakerOptions } from './resilience.ts';

const ACCOUNT = { accountNumber: '0123456789', bankCode: '000023' };
const APPROVED = {
  responseCode: '00',
  responseMessage: 'Approved',
  accountNumber: '0123456789',
  bankCode: '000023',
  accountName: 'ADAEZE CHIOMA OKONKWO',
  bvn: '',
  transactionReference: '',
};

describe('the shared bank call', () => {
  it('maps a 500 to UPSTREAM_UNAVAILABLE', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(500).json({ responseCode: '96' }));
    const { clients } = createTestClients(urlsAt(bank.url));
    const error = await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_UNAVAILABLE');
    expect({ status: error.status, timedOut: error.timedOut }).toEqual({ status: 500, timedOut: false });
  });

  it('gives up after the time-out when the bank never answers', async () => {
    const arrived = Promise.withResolvers<void>();
    const bank = await startFakeBank(() => arrived.resolve()); // never answers
    const { clients } = createTestClients(urlsAt(bank.url), { timeoutMs: 200 });
    const started = performance.now();
    const error = await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_UNAVAILABLE');
    expect({ status: error.status, timedOut: error.timedOut }).toEqual({ status: undefined, timedOut: true });
    await arrived.promise;
    // About 200 ms; at the clients' default (2 s here, createTestClients) it would take at least that.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('gives up after the time-out when the body stalls half-way', async () => {
    const bank = await startFakeBank((_request, reply) => {
      reply.raw.writeHead(200, { 'content-type': 'application/json' });
      reply.raw.write('{"responseCode":'); // and nothing more
    });
    const { clients } = createTestClients(urlsAt(bank.url), { timeoutMs: 200 });
    const error = await expectUpstreamError(clients.account.listBanks(), 'UPSTREAM_UNAVAILABLE');
    expect(error.timedOut).toBe(true);
  });

  it('maps a connection reset mid-request to UPSTREAM_UNAVAILABLE', async () => {
    const bank = await startFakeBank((_request, reply) => reply.destroy());
    const { clients } = createTestClients(urlsAt(bank.url));
    const error = await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_UNAVAILABLE');
    expect({ status: error.status, timedOut: error.timedOut }).toEqual({ status: undefined, timedOut: false });
  });

  it('maps a refused connection to UPSTREAM_UNAVAILABLE', async () => {
    const { clients } = createTestClients(urlsAt(await unusedUrl()));
    await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_UNAVAILABLE');
  });

  it('maps malformed JSON to UPSTREAM_INVALID_RESPONSE', async () => {
    const bank = await startFakeBank((_request, reply) => reply.text('{"responseCode":"00",', 'application/json'));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_INVALID_RESPONSE');
  });

  it('maps a 200 HTML error page to UPSTREAM_INVALID_RESPONSE', async () => {
    const page = '<!DOCTYPE html><html><body><h1>Service Temporarily Unavailable</h1></body></html>';
    const bank = await startFakeBank((_request, reply) => reply.text(page, 'text/html'));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_INVALID_RESPONSE');
  });

  it('maps a 401 to our configured credentials to UPSTREAM_UNAUTHORIZED', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(401).json({ responseCode: '401', responseMessage: 'Unauthorized' }));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_UNAUTHORIZED');
  });

  it('maps a 400 to a request built from our configuration to UPSTREAM_BAD_REQUEST', async () => {
    const bank = await startFakeBank((_request, reply) =>
      reply.status(400).json({ responseCode: '99', responseMessage: 'account_number is required' }),
    );
    const { clients } = createTestClients(urlsAt(bank.url));
    const error = await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_BAD_REQUEST');
    expect(error.extensions).toMatchObject({ responseCode: '99', responseMessage: 'account_number is required' });
  });

  it('maps a responseCode other than 00 to UPSTREAM_REJECTED with the bank code and message', async () => {
    const bank = await startFakeBank((_request, reply) => reply.json({ responseCode: '25', responseMessage: 'Unable to locate record' }));
    const { clients } = createTestClients(urlsAt(bank.url));
    const error = await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_REJECTED');
    expect(error.extensions).toEqual({
      code: 'UPSTREAM_REJECTED',
      responseCode: '25',
      responseMessage: 'Unable to locate record',
    });
  });

  it('does not follow a redirect on an API call, and calls it an invalid response', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(302).header('location', '/login').text(''));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.account.listBanks(), 'UPSTREAM_INVALID_RESPONSE');
    expect(bank.received).toHaveLength(1);
  });

  it('keeps the path prefix of an area URL', async () => {
    const bank = await startFakeBank((_request, reply) => reply.json(APPROVED));
    const { clients } = createTestClients(urlsAt(`${bank.url}/gateway/api/`));
    await clients.account.lookupAccount(ACCOUNT);
    expect(bank.received[0]?.url).toBe('/gateway/api/account/NIP?account_number=0123456789&bank_code=000023');
  });

  it('logs a failure at warn with area, operation, status and code, and records the outcome', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(503).text('<html>down</html>', 'text/html'));
    const { clients, logs, metrics } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_UNAVAILABLE');

    const line = logs.find((entry) => entry.msg === 'bank call failed');
    expect(line).toMatchObject({ level: 40, area: 'account', operation: 'lookupAccount', status: 503, code: 'UPSTREAM_UNAVAILABLE' });
    expectNoLeak(JSON.stringify(logs));
    expect(JSON.stringify(logs)).not.toContain(ACCOUNT.accountNumber);

    const exposition = await metrics.registry.metrics();
    expect(exposition).toMatch(
      /bank_upstream_request_duration_seconds_count\{area="account",operation="lookupAccount",outcome="UPSTREAM_UNAVAILABLE"\} 1/,
    );
  });

  it('records a success with outcome ok', async () => {
    const bank = await startFakeBank((_request, reply) => reply.json(APPROVED));
    const { clients, metrics } = createTestClients(urlsAt(bank.url));
    await clients.account.lookupAccount(ACCOUNT);
    expect(await metrics.registry.metrics()).toMatch(
      /bank_upstream_request_duration_seconds_count\{area="account",operation="lookupAccount",outcome="ok"\} 1/,
    );
  });
});

describe('retries', () => {
  it('retries a read that meets a reset, logging the attempt, and answers', async () => {
    let calls = 0;
    const bank = await startFakeBank((_request, reply) => {
      calls += 1;
      if (calls === 1) reply.destroy();
      else reply.json(APPROVED);
    });
    const { clients, logs, metrics } = createTestClients(urlsAt(bank.url));
    await expect(clients.account.lookupAccount(ACCOUNT)).resolves.toMatchObject({ accountName: APPROVED.accountName });
    expect(bank.received).toHaveLength(2);
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'bank call failed, retrying', operation: 'lookupAccount', attempt: 2 }));
    expect(await metrics.registry.metrics()).toMatch(
      /bank_upstream_retries_total\{area="account",operation="lookupAccount",decision="retried"\} 1/,
    );
  });

  it('logs how many attempts a failed read took', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(503).text(''));
    const { clients, logs } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.billing.listCategories(), 'UPSTREAM_UNAVAILABLE');
    expect(bank.received).toHaveLength(3);
    expect(logs).toContainEqual(
      expect.objectContaining({ msg: 'bank call failed', operation: 'listCategories', status: 503, attempts: 3 }),
    );
  });
});

describe('the circuit breaker', () => {
  /** Calls in the window before it may open (the production setting). */
  const VOLUME = defaultBreakerOptions.volumeThreshold;

  it('opens after repeated unavailability and then fails fast without reaching the bank, never retried', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(502).text('Bad Gateway'));
    const { clients, logs, metrics } = createTestClients(urlsAt(bank.url));
    for (let i = 0; i < VOLUME; i += 1) {
      await expectUpstreamError(clients.account.listBanks(), 'UPSTREAM_UNAVAILABLE');
    }
    const reached = bank.received.length;
    const retryDecisions = async () => (await metrics.bankRetries.get()).values.reduce((sum, v) => sum + v.value, 0);
    const decided = await retryDecisions();

    const error = await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_UNAVAILABLE');
    expect(error.message).toMatch(/unavailable/i);
    expect(bank.received).toHaveLength(reached);
    expect(logs.some((entry) => entry.msg === 'bank circuit opened: failing fast' && entry.area === 'account')).toBe(true);
    // Refused before the retrier: no attempt, and no retry decision of any kind.
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'bank call failed fast', operation: 'lookupAccount', attempts: 0 }));
    expect(await retryDecisions()).toBe(decided);
  });

  it('weighs a call once, however many attempts its retries made', async () => {
    let down = true;
    const bank = await startFakeBank((_request, reply) => (down ? reply.status(503).text('') : reply.json(APPROVED)));
    const { clients } = createTestClients(urlsAt(bank.url));
    // One failed call fewer than the threshold, but with their retries more attempts than it.
    for (let i = 0; i < VOLUME - 1; i += 1) await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_UNAVAILABLE');
    expect(bank.received.length).toBeGreaterThan(VOLUME);
    down = false;
    await expect(clients.account.lookupAccount(ACCOUNT)).resolves.toMatchObject({ accountName: APPROVED.accountName });
  });

  it('counts a call that succeeded on a retry as a success', async () => {
    let mode: 'flaky' | 'up' | 'down' = 'flaky';
    let flakyAttempts = 0;
    const bank = await startFakeBank((_request, reply) => {
      // Flaky: each call's first attempt meets a 503, its retry an answer.
      if (mode === 'flaky') flakyAttempts += 1;
      if (mode === 'down' || (mode === 'flaky' && flakyAttempts % 2 === 1)) reply.status(503).text('');
      else reply.json(APPROVED);
    });
    const { clients, metrics } = createTestClients(urlsAt(bank.url));
    // The retry budget's floor: three calls that succeed on a retry.
    for (let i = 0; i < 3; i += 1)
      await expect(clients.account.lookupAccount(ACCOUNT)).resolves.toMatchObject({ accountName: APPROVED.accountName });
    expect(flakyAttempts).toBe(6);
    // Then the window fills to the threshold, its last call a failure (opossum weighs the window on a failure):
    // 8 failed calls of 20 keep it closed; weighed as failures, the three retried ones would make 11 and open it.
    mode = 'up';
    for (let i = 0; i < VOLUME - 3 - 8; i += 1) await clients.account.lookupAccount(ACCOUNT);
    mode = 'down';
    for (let i = 0; i < 8; i += 1) await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_UNAVAILABLE');
    const state = (await metrics.bankCircuitOpen.get()).values.find((v) => v.labels.area === 'account');
    expect(state?.value).toBe(0);
    mode = 'up';
    await expect(clients.account.lookupAccount(ACCOUNT)).resolves.toMatchObject({ accountName: APPROVED.accountName });
  });

  it('keeps one breaker per area', async () => {
    const bank = await startFakeBank((request, reply) => {
      if (request.url.startsWith('/categories')) reply.json([{ category_id: 1, list_order: '1', name: 'Airtime' }]);
      else reply.status(500).text('');
    });
    const { clients } = createTestClients(urlsAt(bank.url));
    for (let i = 0; i < VOLUME + 1; i += 1) {
      await expectUpstreamError(clients.account.listBanks(), 'UPSTREAM_UNAVAILABLE');
    }
    await expect(clients.billing.listCategories()).resolves.toHaveLength(1);
  });

  it('is not opened by refusals, which prove the bank is up', async () => {
    let calls = 0;
    const bank = await startFakeBank((_request, reply) => {
      calls += 1;
      if (calls <= VOLUME + 1) reply.status(401).json({ responseCode: '401', responseMessage: 'Unauthorized' });
      else reply.json(APPROVED);
    });
    const { clients } = createTestClients(urlsAt(bank.url));
    for (let i = 0; i < VOLUME + 1; i += 1) {
      await expectUpstreamError(clients.account.lookupAccount(ACCOUNT), 'UPSTREAM_UNAUTHORIZED');
    }
    await expect(clients.account.lookupAccount(ACCOUNT)).resolves.toMatchObject({ accountName: APPROVED.accountName });
  });
});
