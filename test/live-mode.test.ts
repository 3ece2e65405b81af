import { describe, expect, it } from 'vitest';
import { startApp } from './helpers/app.ts';
import { LOOPBACK_SOURCES, productionHeaders, TEST_AUTH } from './helpers/production.ts';
import type { ReceivedRequest } from './helpers/request-log.ts';
import { startRecordedSandbox } from './helpers/sandbox.ts';

// UPSTREAM_MODE=live pointed at a separately started sandbox, every URL and credential given
// explicitly as in production: what the bank receives (recorded by a proxy in front of it), request
// by request, for the sitting a new user would try.
const CREDENTIALS = {
  BANK_API_TOKEN: 'sandbox-api-token',
  BANK_USERNAME: 'sandbox-user',
  BANK_PASSWORD: 'sandbox-password',
  BILLING_USERNAME: 'sandbox-billing',
  BILLING_PASSWORD: 'sandbox-billing-password',
  POSTING_USERNAME: 'sandbox-posting',
  POSTING_PASSWORD: 'sandbox-posting-password',
  OAUTH_CLIENT_ID: 'sandbox-oauth-client',
  OAUTH_CLIENT_SECRET: 'sandbox-oauth-secret',
  // Not the sandbox's published webhook values: a live bank refuses those.
  WEBHOOK_CLIENT_ID: 'live-collection',
  WEBHOOK_CLIENT_SECRET: 'live-webhook-secret',
};

async function startLive() {
  const bank = await startRecordedSandbox();
  const app = await startApp(
    {
      UPSTREAM_MODE: 'live',
      BANK_BASE_URL: bank.urls.base,
      BANK_GATEWAY_URL: bank.urls.gateway,
      BANK_BILLING_URL: bank.urls.billing,
      BANK_POSTING_URL: bank.urls.posting,
      BANK_WALLET_URL: bank.urls.wallet,
      COLLECTION_CONFIRMATION: 'off',
      ...CREDENTIALS,
      ...TEST_AUTH,
      ...LOOPBACK_SOURCES,
    },
    {},
    { headers: await productionHeaders() },
  );
  /** The one request the bank received on this path since the last call. */
  let seen = 0;
  const lastTo = (path: string): ReceivedRequest => {
    const fresh = bank.received.slice(seen);
    seen = bank.received.length;
    const matching = fresh.filter((r) => r.path === path);
    expect(matching, `requests to ${path}`).toHaveLength(1);
    return matching[0]!;
  };
  return { ...app, lastTo, fingerprint: bank.fingerprint };
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

describe('live mode against a separately started bank', () => {
  it('sends account-area calls with the token, username and password headers', async () => {
    const { query, lastTo, fingerprint } = await startLive();
    const { errors } = await query('{ account(accountNumber: "0123456789", bankCode: "000023") { accountName } }');
    expect(errors).toBeUndefined();
    const lookup = lastTo('/bank/account/NIP');
    expect(lookup.method).toBe('GET');
    expect(lookup.query).toEqual({ account_number: '0123456789', bank_code: '000023' });
    expect(lookup.headers).toMatchObject({
      authorization: fingerprint('sandbox-api-token'),
      username: 'sandbox-user',
      password: fingerprint('sandbox-password'),
    });

    await query('{ banks { code } }');
    expect(lastTo('/bank/v1/account/NIP/banks').headers.authorization).toBe(fingerprint('sandbox-api-token'));
    await query('{ bvn(number: "22212345678") { firstName } }');
    expect(lastTo('/bank/v1/account/bvn').query).toEqual({ number: '22212345678' });
  });

  it('sends bill-payment calls with Basic credentials', async () => {
    const { query, lastTo, fingerprint } = await startLive();
    await query('{ billCategory(id: 3) { name } }');
    expect(lastTo('/billing/provipay/webapi/categories').headers.authorization).toBe(
      fingerprint(basic('sandbox-billing', 'sandbox-billing-password')),
    );
    await query('{ bills(categoryId: 3) { name } }');
    expect(lastTo('/billing/provipay/webapi/bill/assigned/byCategoryId/3').method).toBe('GET');
  });

  it('sends the posting lookup with its credentials in a JSON body', async () => {
    const { query, lastTo, fingerprint } = await startLive();
    await query('{ postingAccount(accountNumber: "0011223344", beneficiaryBank: "000013") { accountName } }');
    const posting = lastTo('/posting/postingrest/GetNIPAccount');
    expect(posting.method).toBe('POST');
    expect(posting.headers).toMatchObject({ accept: 'application/json', 'content-type': 'application/json' });
    expect(JSON.parse(posting.body)).toEqual({
      accountNumber: '0011223344',
      beneficiaryBank: '000013',
      userName: 'sandbox-posting',
      password: fingerprint('sandbox-posting-password'),
    });
  });

  it('signs a merchant in with base64 e-mail and password, and refreshes with the header token', async () => {
    const { query, lastTo, fingerprint } = await startLive();
    const login = await query('mutation { merchantLogin(email: "merchant@sandbox.ng", password: "Sandbox#2026") { refreshToken } }');
    const sent = lastTo('/wallet/auth/login');
    expect(JSON.parse(sent.body)).toEqual({
      email: Buffer.from('merchant@sandbox.ng').toString('base64'),
      password: fingerprint(Buffer.from('Sandbox#2026').toString('base64')),
    });
    const refreshToken = login.data!.merchantLogin.refreshToken;
    await query('mutation($t: String!) { merchantRefreshSession(refreshToken: $t) { accessToken } }', { t: refreshToken });
    expect(lastTo('/wallet/auth/refresh/token').headers['x-refresh-token']).toBe(fingerprint(refreshToken));
  });

  it('runs OAuth with a form-encoded authorize query and a Basic-authenticated form exchange', async () => {
    const { query, lastTo, fingerprint } = await startLive();
    const redirectUri = 'https://app.example.com/cb?x=1&y=a b';
    const authorize = await query('mutation($u: String!) { transactionAuthorize(redirectUri: $u) { code } }', { u: redirectUri });
    const asked = lastTo('/bank/transaction/oauth/authorize/');
    expect(asked.method).toBe('GET');
    expect(asked.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(asked.query).toEqual({ response_type: 'code', client_id: 'sandbox-oauth-client', redirect_uri: redirectUri });

    const code = authorize.data!.transactionAuthorize.code;
    const token = await query('mutation($c: String!, $u: String!) { transactionToken(code: $c, redirectUri: $u) { accessToken } }', {
      c: code,
      u: redirectUri,
    });
    expect(token.errors).toBeUndefined();
    const exchange = lastTo('/gateway/transaction/oauth/authorize/');
    expect(exchange.method).toBe('POST');
    expect(exchange.headers.authorization).toBe(fingerprint(basic('sandbox-oauth-client', 'sandbox-oauth-secret')));
    expect(Object.fromEntries(new URLSearchParams(exchange.body))).toEqual({
      grant_type: 'authorization_code',
      client_id: 'sandbox-oauth-client',
      code: fingerprint(code),
      redirect_uri: redirectUri,
    });
    expect(exchange.body).toContain(`redirect_uri=${encodeURIComponent(redirectUri).replace(/%20/g, '+')}`);
  });
});
