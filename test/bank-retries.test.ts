import { describe, expect, it } from 'vitest';
import { startCountingBank, startLiveApp, type BankOperation } from './helpers/counting-bank.ts';
import { scrape } from './helpers/metrics.ts';

// Idempotent reads are retried on a transient fault, inside BANK_TIMEOUT_MS and a retry budget;
// anything that may change state at the bank is sent once. How an outage is bounded, retry budget
// and circuit breaker together: bank-breaker.test.ts.

/** A counting bank whose first `failures` calls of `operation` answer 503 (all of them when Infinity). */
async function startFlakyBank(operation: BankOperation, failures: number) {
  let failed = 0;
  const bank = await startCountingBank({
    intercept: (called, _request, reply) => {
      if (called !== operation || failed >= failures) return false;
      failed += 1;
      reply.status(503).text('Service Unavailable');
      return true;
    },
  });
  const app = await startLiveApp(bank.url);
  return { bank, app };
}

const ENQUIRY = '{ account(accountNumber: "0123456789", bankCode: "000023") { accountName } }';

describe('retries', () => {
  it('retries a read that meets a transient 503, and answers', async () => {
    const { bank, app } = await startFlakyBank('lookupAccount', 1);
    const response = await app.query(ENQUIRY);
    expect(response.errors).toBeUndefined();
    expect(response.data!.account.accountName).toBe('ADAEZE CHIOMA OKONKWO');
    expect(bank.calls('lookupAccount')).toBe(2);
    expect(await scrape(app, 'bank_upstream_retries_total{area="account",operation="lookupAccount",decision="retried"}')).toBe(1);
  });

  it('retries the posting lookup, a POST that only reads', async () => {
    const { bank, app } = await startFlakyBank('postingLookup', 1);
    const response = await app.query('{ postingAccount(accountNumber: "0123456789", beneficiaryBank: "000013") { accountName } }');
    expect(response.errors).toBeUndefined();
    expect(bank.calls('postingLookup')).toBe(2);
  });

  const STATE_CHANGING: { name: string; operation: BankOperation; mutation: string }[] = [
    {
      name: 'a wallet login',
      operation: 'wallet',
      mutation: 'mutation { merchantLogin(email: "merchant@sandbox.ng", password: "Sandbox#2026") { accessToken } }',
    },
    { name: 'a wallet logout', operation: 'wallet', mutation: 'mutation { merchantLogout(accessToken: "a", refreshToken: "r") }' },
    { name: 'a session refresh', operation: 'wallet', mutation: 'mutation { merchantRefreshSession(refreshToken: "r") { accessToken } }' },
    {
      name: 'a forgotten password',
      operation: 'wallet',
      mutation: 'mutation { merchantForgotPassword(email: "merchant@sandbox.ng") { status } }',
    },
    {
      name: 'a password reset',
      operation: 'wallet',
      mutation: 'mutation { merchantResetPassword(resetCode: "482913", password: "NewPass#2026") { status } }',
    },
    {
      name: 'an OAuth authorize',
      operation: 'oauthAuthorize',
      mutation: 'mutation { transactionAuthorize(redirectUri: "https://app.example.com/cb") { code } }',
    },
    {
      name: 'an OAuth token exchange',
      operation: 'oauthToken',
      mutation: 'mutation { transactionToken(code: "c", redirectUri: "https://app.example.com/cb") { accessToken } }',
    },
  ];

  it.each(STATE_CHANGING)('sends $name that meets a 503 once', async ({ operation, mutation }) => {
    const { bank, app } = await startFlakyBank(operation, 1);
    const response = await app.query(mutation);
    expect(response.errors![0]!.extensions!.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(bank.calls(operation)).toBe(1);
  });
});
