import { describe, expect, it } from 'vitest';
import { createTestClients, urlsAt } from '../../test/helpers/bank-clients.ts';
import { unusedUrl } from '../../test/helpers/fake-bank.ts';
import { startFakeCollectionBank, type FakeCollectionAnswer } from '../../test/helpers/fake-collection-bank.ts';
import { UpstreamError, badUserInput, type UpstreamErrorCode } from '../errors.ts';
import { failureKind, slowDown } from './failure-kind.ts';
import { defaultBreakerOptions } from './resilience.ts';

const failure = (code: UpstreamErrorCode, status?: number, timedOut = false) =>
  new UpstreamError(code, { area: 'collection', operation: 'verifyBySettlementId', status, timedOut });

describe('failureKind and slowDown', () => {
  it.each([
    ['a 400', failure('UPSTREAM_BAD_REQUEST', 400)],
    ['a 404 (not the documented not-found answer)', failure('UPSTREAM_BAD_REQUEST', 404)],
    ['a 403', failure('UPSTREAM_UNAUTHORIZED', 403)],
    ['a 422', failure('UPSTREAM_BAD_REQUEST', 422)],
    ['an error envelope in a 200', failure('UPSTREAM_REJECTED', 200)],
    ['an unreadable 200', failure('UPSTREAM_INVALID_RESPONSE', 200)],
    ['a redirect', failure('UPSTREAM_INVALID_RESPONSE', 302)],
    ['an answer past the size limit', failure('UPSTREAM_INVALID_RESPONSE')],
    ['an id refused before any call', badUserInput('settlementId', 'must not be empty')],
  ])('takes %s for a failure about this transfer, asked again without slowing', (_what, error) => {
    expect(failureKind(error)).toBe('about-this-transfer');
    expect(slowDown(error)).toBe(false);
  });

  it.each([
    ['a 401', failure('UPSTREAM_UNAUTHORIZED', 401), false],
    ['a 408', failure('UPSTREAM_UNAVAILABLE', 408), false],
    ['a 429', failure('UPSTREAM_UNAVAILABLE', 429), true],
    ['a 500', failure('UPSTREAM_UNAVAILABLE', 500), false],
    ['a 502', failure('UPSTREAM_UNAVAILABLE', 502), false],
    ['a 503', failure('UPSTREAM_UNAVAILABLE', 503), true],
    ['a time-out', failure('UPSTREAM_UNAVAILABLE', undefined, true), true],
    ['no connection (or an open circuit)', failure('UPSTREAM_UNAVAILABLE'), false],
    ['a fault of ours, which pausing loses nothing to', new TypeError('x is undefined'), false],
  ])("takes %s for the bank's trouble (slowing down: %s)", (_what, error, slows) => {
    expect(failureKind(error)).toBe('bank-trouble');
    expect(slowDown(error)).toBe(slows);
  });
});

describe('failures of ops 15 and 16 against the stand-in bank, as the confirmer tells them apart', () => {
  const ID = 'S-ASKED';
  it.each([
    ['a 400', { status: 400 }, 'about-this-transfer', false, 400],
    ['a 404', { status: 404 }, 'about-this-transfer', false, 404],
    ['an error envelope', { declined: '96' }, 'about-this-transfer', false, 200],
    ['an empty object', { text: '{}' }, 'about-this-transfer', false, 200],
    ['an HTML page', { text: '<html>busy</html>', contentType: 'text/html' }, 'about-this-transfer', false, 200],
    ['a 401', { status: 401 }, 'bank-trouble', false, 401],
    ['a 429', { status: 429 }, 'bank-trouble', true, 429],
    ['a 500', { status: 500 }, 'bank-trouble', false, 500],
    ['a 503', { status: 503 }, 'bank-trouble', true, 503],
  ] satisfies [string, FakeCollectionAnswer, string, boolean, number][])('%s', async (_what, answer, kind, slows, status) => {
    const bank = await startFakeCollectionBank();
    bank.answer(ID, answer);
    const { clients } = createTestClients(urlsAt(bank.url));
    const error = await clients.collection.verifyBySettlementId(ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect({ kind: failureKind(error), slows: slowDown(error), status: (error as UpstreamError).status }).toEqual({ kind, slows, status });
  });

  it('a time-out: the bank in trouble, and asked less at once', async () => {
    const bank = await startFakeCollectionBank();
    bank.answer(ID, 'hang');
    const { clients } = createTestClients(urlsAt(bank.url), { timeoutMs: 300 });
    const error = await clients.collection.verifyBySettlementId(ID).catch((e: unknown) => e);
    expect({ kind: failureKind(error), slows: slowDown(error), timedOut: (error as UpstreamError).timedOut }).toEqual({
      kind: 'bank-trouble',
      slows: true,
      timedOut: true,
    });
  });

  it('one id refused with 404 is a failure about it alone: the others are answered', async () => {
    const bank = await startFakeCollectionBank();
    bank.know({ settlementId: 'S-GOOD', sessionId: 'N-GOOD', accountNumber: '0123456789', transactionAmount: '5.00' });
    bank.answer('S-REFUSED', { status: 404, body: { error: 'Not Found' } });
    const { clients } = createTestClients(urlsAt(bank.url));
    const refused = await clients.collection.verifyBySettlementId('S-REFUSED').catch((e: unknown) => e);
    expect(failureKind(refused)).toBe('about-this-transfer');
    await expect(clients.collection.verifyBySettlementId('S-GOOD')).resolves.toMatchObject({ transactionAmount: '5.00' });
    await expect(clients.collection.verifyBySettlementId('S-UNKNOWN')).resolves.toBeNull();
  });

  it('no connection, and the open circuit after it: the bank in trouble', async () => {
    const { clients, metrics } = createTestClients(urlsAt(await unusedUrl()));
    const refused = await clients.collection.verifyBySettlementId(ID).catch((e: unknown) => e);
    expect({ kind: failureKind(refused), slows: slowDown(refused) }).toEqual({ kind: 'bank-trouble', slows: false });
    for (let i = 1; i < defaultBreakerOptions.volumeThreshold; i += 1)
      await clients.collection.verifyBySettlementId(ID).catch(() => undefined);
    expect((await metrics.bankCircuitOpen.get()).values.find((v) => v.labels.area === 'collection')?.value).toBe(1);
    const open = await clients.collection.verifyBySettlementId(ID).catch((e: unknown) => e);
    expect(failureKind(open)).toBe('bank-trouble');
  });
});
