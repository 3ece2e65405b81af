import { Writable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from './credentials.ts';
import { accountHeaders, b64, basic, call, postJson, startSandbox, useSandbox } from '../../test/helpers/sandbox.ts';

describe('the sandbox server', () => {
  const sandbox = useSandbox();

  it('serves each area under its own prefix on loopback', () => {
    const { urls } = sandbox();
    const origin = new URL(urls.base).origin;
    expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(urls).toEqual({
      base: `${origin}/bank`,
      gateway: `${origin}/gateway`,
      billing: `${origin}/billing/provipay/webapi`,
      posting: `${origin}/posting/postingrest`,
      wallet: `${origin}/wallet`,
    });
  });

  it.each([
    ['the account area', '/account/NIP?account_number=0123456789', accountHeaders],
    ['the billing area', '/provipay/webapi/categories', {
      authorization: basic(sandboxCredentials.billingUsername, sandboxCredentials.billingPassword),
    }],
  ])('answers 404 when a client drops the prefix of %s', async (_name, path, headers) => {
    const origin = new URL(sandbox().urls.base).origin;
    expect((await call(`${origin}${path}`, { headers })).status).toBe(404);
  });

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
    const posting = { accountNumber: '0123456789', beneficiaryBank: '000023', userName: sandboxCredentials.postingUsername, password: sandboxCredentials.postingPassword };
    await postJson(`${urls.posting}/GetNIPAccount`, posting);
    await postJson(`${urls.wallet}/auth/login`, { email: b64('merchant@sandbox.ng'), password: b64('Sandbox#2026') });
    await call(`${urls.wallet}/auth/logout`, { method: 'POST', headers: { 'x-access-token': 'access-t0ken', 'x-refresh-token': 'refresh-t0ken' } });
    await postJson(`${urls.wallet}/auth/password/reset`, { resetCode: '482913', password: 'N3w-Pässword!', nested: [{ client_secret: 'deep-s3cret' }] });
    await call(`${urls.gateway}/transaction/oauth/authorize/?access_token=query-t0ken`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(sandboxCredentials.oauthClientId, sandboxCredentials.oauthClientSecret) },
      body: 'grant_type=refresh_token&refresh_token=form-t0ken&client_secret=form-s3cret',
    });
    await call(`${urls.wallet}/auth/login`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'password=plain-s3cret' });

    const recorded = JSON.stringify(received);
    const secrets = [
      ...(['apiToken', 'password', 'billingPassword', 'postingPassword', 'oauthClientSecret'] as const).map((name) => sandboxCredentials[name]),
      billing.slice('Basic '.length),
      b64('Sandbox#2026'),
      'access-t0ken', 'refresh-t0ken', '482913', 'N3w-P', 'deep-s3cret', 'query-t0ken', 'form-t0ken', 'form-s3cret', 'plain-s3cret',
    ];
    for (const secret of secrets) expect(recorded, secret).not.toContain(secret);

    // What was sent stays provable: each fingerprint is of the exact value, beside the non-secret fields.
    expect(received[0]!.headers.authorization).toBe(fingerprint(billing));
    expect(JSON.parse(received[1]!.body)).toEqual({ ...posting, password: fingerprint(sandboxCredentials.postingPassword) });
    expect(JSON.parse(received[2]!.body)).toEqual({ email: b64('merchant@sandbox.ng'), password: fingerprint(b64('Sandbox#2026')) });
    expect(received[3]!.headers).toMatchObject({ 'x-access-token': fingerprint('access-t0ken'), 'x-refresh-token': fingerprint('refresh-t0ken') });
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

  it('fingerprints each value apart, and differently in another sandbox', async () => {
    const other = await startSandbox();
    expect(sandbox().fingerprint('a')).not.toBe(sandbox().fingerprint('b'));
    expect(sandbox().fingerprint('a')).toBe(sandbox().fingerprint('a'));
    expect(other.fingerprint('a')).not.toBe(sandbox().fingerprint('a'));
  });

  it('records requests to unknown paths too', async () => {
    await call(`${new URL(sandbox().urls.base).origin}/nowhere?x=1`);
    expect(sandbox().received.at(-1)).toMatchObject({ method: 'GET', path: '/nowhere', query: { x: '1' } });
  });
});

describe('the sandbox lifecycle', () => {
  it('keeps only the last receivedLimit requests, oldest first', async () => {
    const sandbox = await startSandbox({ receivedLimit: 3 });
    for (let i = 1; i <= 5; i += 1) await call(`${sandbox.urls.base}/v1/account/bvn?number=${i}`);
    expect(sandbox.received.map((entry) => entry.query.number)).toEqual(['3', '4', '5']);
  });

  it('stops listening when closed', async () => {
    const sandbox = await startSandbox();
    await sandbox.close();
    await expect(request(`${sandbox.urls.base}/v1/account/NIP/banks`)).rejects.toThrow();
  });

  it('logs one debug line per request without any credential', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const sandbox = await startSandbox({ logger: pino({ level: 'debug' }, sink) });
    await call(`${sandbox.urls.base}/account/NIP?account_number=0123456789`, { headers: accountHeaders });
    await call(`${sandbox.urls.billing}/categories`, {
      headers: { authorization: basic(sandboxCredentials.billingUsername, sandboxCredentials.billingPassword) },
    });
    await postJson(`${sandbox.urls.posting}/GetNIPAccount`, {
      accountNumber: '0123456789',
      beneficiaryBank: '000023',
      userName: sandboxCredentials.postingUsername,
      password: sandboxCredentials.postingPassword,
    });
    await sandbox.close(); // every request's line is written by then
    const requestLines = lines.filter((line) => line.includes('bank sandbox request'));
    expect(requestLines).toHaveLength(3);
    const first = JSON.parse(requestLines[0] ?? '{}');
    expect(first).toMatchObject({ level: 20, method: 'GET', path: '/bank/account/NIP', statusCode: 200 });
    const everything = lines.join('');
    for (const secret of Object.values(sandboxCredentials)) expect(everything).not.toContain(secret);
    expect(everything).not.toContain(Buffer.from(`${sandboxCredentials.billingUsername}:`).toString('base64').slice(0, 12));
  });
});
