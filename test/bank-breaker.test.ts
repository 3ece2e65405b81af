import { describe, expect, it } from 'vitest';
import type { TestApp } from './helpers/app.ts';
import { startCountingBank, startLiveApp } from './helpers/counting-bank.ts';
import { scrape, scrapeSum } from './helpers/metrics.ts';

// Each bank area's circuit breaker opens on an outage, never on a handful of failed user calls: it
// needs 20 calls in its 10 s window, more than half finding the bank unavailable. A call counts
// once, however many attempts its retries made. Once open, it refuses before the retrier.

/** A counting bank whose name enquiries answer 503 while `down` is true. */
async function startAccountArea() {
  const state = { down: true };
  const bank = await startCountingBank({
    intercept: (operation, _request, reply) => {
      if (operation !== 'lookupAccount' || !state.down) return false;
      reply.status(503).text('Service Unavailable');
      return true;
    },
  });
  const app = await startLiveApp(bank.url);
  return { bank, app, state };
}

/** A name enquiry of a distinct account each time, so sharing in flight plays no part. */
let accounts = 0;
function enquiry(app: TestApp) {
  accounts += 1;
  return app.query(`{ account(accountNumber: "${String(accounts).padStart(10, '0')}", bankCode: "000023") { accountName } }`);
}

const circuit = (app: TestApp) => scrape(app, 'bank_circuit_open{area="account"}');

describe('the circuit breaker of a bank area', () => {
  it('stays closed through two failed name enquiries: once the bank is back, the next one reaches it', async () => {
    const { bank, app, state } = await startAccountArea();
    for (let i = 0; i < 2; i += 1) {
      const failed = await enquiry(app);
      expect(failed.errors![0]!.extensions!.code).toBe('UPSTREAM_UNAVAILABLE');
    }
    // Both were retried: more attempts than a breaker counting attempts would have allowed.
    const attempts = bank.calls('lookupAccount');
    expect(attempts).toBeGreaterThan(2);
    expect(await circuit(app)).toBe(0);

    state.down = false;
    const answered = await enquiry(app);
    expect(answered.errors).toBeUndefined();
    expect(answered.data!.account.accountName).toBe('ADAEZE CHIOMA OKONKWO');
    expect(bank.calls('lookupAccount')).toBe(attempts + 1);
    expect(await circuit(app)).toBe(0);
  });

  it('stays closed through 19 failed calls in its window and opens on the 20th', async () => {
    const { app } = await startAccountArea();
    for (let i = 0; i < 19; i += 1) await enquiry(app);
    expect(await circuit(app)).toBe(0);
    await enquiry(app);
    expect(await circuit(app)).toBe(1);
  });

  it('opens on a sustained outage, then refuses at once, never retried, with no bank call', async () => {
    const { bank, app } = await startAccountArea();
    const responses = await Promise.all(Array.from({ length: 20 }, () => enquiry(app)));
    for (const response of responses) expect(response.errors![0]!.extensions!.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(await circuit(app)).toBe(1);
    // The 20 calls and the retries their budget allows: 3, or 20 % of the window's calls if more.
    const seen = bank.calls('lookupAccount');
    expect(seen).toBeGreaterThanOrEqual(20);
    expect(seen).toBeLessThanOrEqual(20 + 4);

    const retryDecisions = await scrapeSum(app, 'bank_upstream_retries_total', { area: 'account' });
    const refused = [];
    for (let i = 0; i < 10; i += 1) refused.push(await enquiry(app));
    for (const response of refused) expect(response.errors![0]!.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(bank.calls('lookupAccount')).toBe(seen);
    // The retrier never saw them: no retry, and no retry refused for want of budget, time or attempts.
    expect(await scrapeSum(app, 'bank_upstream_retries_total', { area: 'account' })).toBe(retryDecisions);
    expect(await scrapeSum(app, 'bank_upstream_request_duration_seconds_count', { area: 'account', outcome: 'UPSTREAM_UNAVAILABLE' })).toBe(
      30,
    );
  });
});
