import { Writable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from './credentials.ts';
import { accountHeaders, basic, call, postJson, startSandbox, useSandbox } from '../../test/helpers/sandbox.ts';

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
      collection: `${origin}/collection`,
    });
  });

  it.each([
    ['the account area', '/account/NIP?account_number=0123456789', accountHeaders],
    [
      'the billing area',
      '/provipay/webapi/categories',
      {
        authorization: basic(sandboxCredentials.billingUsername, sandboxCredentials.billingPassword),
      },
    ],
  ])('answers 404 when a client drops the prefix of %s', async (_name, path, headers) => {
    const origin = new URL(sandbox().urls.base).origin;
    expect((await call(`${origin}${path}`, { headers })).status).toBe(404);
  });
});

describe('the sandbox lifecycle', () => {
  it('stops listening when closed', async () => {
    const sandbox = await startSandbox();
    await sandbox.close();
    await expect(request(`${sandbox.urls.base}/v1/account/NIP/banks`)).rejects.toBeInstanceOf(Error);
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
