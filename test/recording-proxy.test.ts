import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';
import { accountHeaders, b64, basic, call, postJson, startRecordedSandbox, startSandbox, useRecordedSandbox } from './helpers/sandbox.ts';

// The recording proxy the bank clients' wire-format tests read: what it keeps of each request, with
// no secret's value, and that the client behind it gets the bank's own answer.
describe('the recording proxy in front of the sandbox', () => {
  const sandbox = useRecordedSandbox();

  it('records the method, path, query, headers and body of each request, each secret as its fingerprint', async () => {
    const { urls, received, fingerprint } = sandbox();
    await call(`${urls.base}/account/NIP?account_number=0123456789&bank_code=000023`, { headers: accountHeaders });
    const body = 'grant_type=authorization_code&code=abc&redirect_uri=https%3A%2F%2Fm.example%2Fcb';
    await call(`${urls.gateway}/transaction/oauth/authorize/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    expect(received).toHaveLength(2);
    expect(received[0]).toMatchObject({
      method: 'GET',
      path: '/bank/account/NIP',
      query: { account_number: '0123456789', bank_code: '000023' },
      headers: { authorization: fingerprint('sandbox-api-token'), username: 'sandbox-user', password: fingerprint('sandbox-password') },
      body: '',
    });
    expect(received[1]).toMatchObject({
      method: 'POST',
      path: '/gateway/transaction/oauth/authorize/',
      query: {},
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      // The code swapped in place: every other pair keeps the exact encoding it was sent with.
      body: `grant_type=authorization_code&code=${encodeURIComponent(fingerprint('abc'))}&redirect_uri=https%3A%2F%2Fm.example%2Fcb`,
    });
  });

  it('keeps a JSON body without secrets as the exact text sent, even when the request is refused', async () => {
    const text = '{ "accountNumber":"0123456789",\n  "beneficiaryBank":"000023" }';
    await call(`${sandbox().urls.posting}/GetNIPAccount`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: text,
    });
    expect(sandbox().received.at(-1)?.body).toBe(text);
  });

  it('keeps no secret value of any area: headers, Basic credentials, body fields at any depth, query', async () => {
    const { urls, received, fingerprint } = sandbox();
    const billing = basic(sandboxCredentials.billingUsername, sandboxCredentials.billingPassword);
    await call(`${urls.billing}/categories`, { headers: { authorization: billing } });
    const posting = {
      accountNumber: '0123456789',
      beneficiaryBank: '000023',
      userName: sandboxCredentials.postingUsername,
      password: sandboxCredentials.postingPassword,
    };
    await postJson(`${urls.posting}/GetNIPAccount`, posting);
    await postJson(`${urls.wallet}/auth/login`, { email: b64('merchant@sandbox.ng'), password: b64('Sandbox#2026') });
    await call(`${urls.wallet}/auth/logout`, {
      method: 'POST',
      headers: { 'x-access-token': 'access-t0ken', 'x-refresh-token': 'refresh-t0ken' },
    });
    await postJson(`${urls.wallet}/auth/password/reset`, {
      resetCode: '482913',
      password: 'N3w-Pässword!',
      nested: [{ client_secret: 'deep-s3cret' }],
    });
    await call(`${urls.gateway}/transaction/oauth/authorize/?access_token=query-t0ken`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(sandboxCredentials.oauthClientId, sandboxCredentials.oauthClientSecret),
      },
      body: 'grant_type=refresh_token&refresh_token=form-t0ken&client_secret=form-s3cret',
    });
    await call(`${urls.wallet}/auth/login`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'password=plain-s3cret' });

    const recorded = JSON.stringify(received);
    const secrets = [
      ...(['apiToken', 'password', 'billingPassword', 'postingPassword', 'oauthClientSecret'] as const).map(
        (name) => sandboxCredentials[name],
      ),
      billing.slice('Basic '.length),
      b64('Sandbox#2026'),
      'access-t0ken',
      'refresh-t0ken',
      '482913',
      'N3w-P',
      'deep-s3cret',
      'query-t0ken',
      'form-t0ken',
      'form-s3cret',
      'plain-s3cret',
    ];
    for (const secret of secrets) expect(recorded, secret).not.toContain(secret);

    // What was sent stays provable: each fingerprint is of the exact value, beside the non-secret fields.
    expect(received[0]!.headers.authorization).toBe(fingerprint(billing));
    expect(JSON.parse(received[1]!.body)).toEqual({ ...posting, password: fingerprint(sandboxCredentials.postingPassword) });
    expect(JSON.parse(received[2]!.body)).toEqual({ email: b64('merchant@sandbox.ng'), password: fingerprint(b64('Sandbox#2026')) });
    expect(received[3]!.headers).toMatchObject({
      'x-access-token': fingerprint('access-t0ken'),
      'x-refresh-token': fingerprint('refresh-t0ken'),
    });
    expect(JSON.parse(received[4]!.body)).toEqual({
      resetCode: fingerprint('482913'),
      password: fingerprint('N3w-Pässword!'),
      nested: [{ client_secret: fingerprint('deep-s3cret') }],
    });
    expect(received[5]!.query).toEqual({ access_token: fingerprint('query-t0ken') });
    expect(Object.fromEntries(new URLSearchParams(received[5]!.body))).toEqual({
      grant_type: 'refresh_token',
      refresh_token: fingerprint('form-t0ken'),
      client_secret: fingerprint('form-s3cret'),
    });
    expect(received[6]!.body).toBe('[21 bytes, neither JSON nor a form]');
  });

  it('fingerprints each value apart, and differently in another proxy', async () => {
    const other = await startRecordedSandbox();
    expect(sandbox().fingerprint('a')).not.toBe(sandbox().fingerprint('b'));
    expect(sandbox().fingerprint('a')).toBe(sandbox().fingerprint('a'));
    expect(other.fingerprint('a')).not.toBe(sandbox().fingerprint('a'));
  });

  it('records requests to unknown paths too', async () => {
    await call(`${new URL(sandbox().urls.base).origin}/nowhere?x=1`);
    expect(sandbox().received.at(-1)).toMatchObject({ method: 'GET', path: '/nowhere', query: { x: '1' } });
  });
});

describe('what the recording proxy relays', () => {
  /** The same request sent to the sandbox itself and through a recording proxy in front of another. */
  async function bothWays(path: (urls: { base: string; billing: string }) => string, init: Parameters<typeof call>[1] = {}) {
    const direct = await startSandbox();
    const recorded = await startRecordedSandbox();
    return { direct: await call(path(direct.urls), init), proxied: await call(path(recorded.urls), init), recorded };
  }

  it.each([
    ['an answer', (urls: { base: string }) => `${urls.base}/v1/account/NIP/banks`, { headers: accountHeaders }],
    ['a refusal', (urls: { base: string }) => `${urls.base}/v1/account/NIP/banks`, {}],
    ['an unknown path', (urls: { base: string }) => `${new URL(urls.base).origin}/nowhere`, {}],
    [
      "a failure in the area's own body",
      (urls: { billing: string }) => `${urls.billing}/bill/assigned/byCategoryId/x`,
      {
        headers: { authorization: basic(sandboxCredentials.billingUsername, sandboxCredentials.billingPassword) },
      },
    ],
  ])('gives the client the status, content type and body of %s as the sandbox sends them', async (_name, path, init) => {
    const { direct, proxied, recorded } = await bothWays(path, init);
    expect(proxied.status).toBe(direct.status);
    expect(proxied.headers['content-type']).toBe(direct.headers['content-type']);
    expect(proxied.text).toBe(direct.text);
    expect(recorded.received).toHaveLength(1);
  });

  it('relays a redirect without following it', async () => {
    const { urls, received } = await startRecordedSandbox();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: sandboxCredentials.oauthClientId,
      redirect_uri: 'https://m.example/cb',
      state: 's1',
    });
    const answer = await call(`${urls.base}/transaction/oauth/authorize/?${query}`, { headers: { accept: 'text/html' } });
    expect(answer.status).toBe(302);
    const location = new URL(String(answer.headers.location));
    expect(location.origin + location.pathname).toBe('https://m.example/cb');
    expect(location.searchParams.get('state')).toBe('s1');
    expect(received).toHaveLength(1);
  });
});
