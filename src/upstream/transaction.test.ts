import { describe, expect, it } from 'vitest';
import { startFakeBank } from '../../test/helpers/fake-bank.ts';
import { basic, lastReceived, useRecordedSandbox } from '../../test/helpers/sandbox.ts';
import { sandboxCredentials } from '../sandbox/credentials.ts';
import {
  createTestClients,
  expectUpstreamError,
  sandboxBankCredentials,
  sandboxSecrets,
  testCredentials,
  testSecrets,
  urlsAt,
} from '../../test/helpers/bank-clients.ts';

const REDIRECT = 'https://partner.example.ng/oauth/callback?from=app&x=a b';

describe('transaction client, odd answers', () => {
  it('op 4: accepts a 302 whose Location carries the code, without following it', async () => {
    const bank = await startFakeBank((_request, reply) =>
      reply.status(302).header('location', 'https://partner.example.ng/oauth/callback?code=c0de-42&state=s').text(''),
    );
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.transaction.authorize(REDIRECT)).resolves.toEqual({ code: 'c0de-42', redirectUri: REDIRECT });
    expect(bank.received).toHaveLength(1);
  });

  it("op 4: a Location carrying error= is a refusal with the bank's error", async () => {
    const bank = await startFakeBank((_request, reply) =>
      reply.status(302).header('location', 'https://partner.example.ng/cb?error=access_denied&error_description=User%20denied').text(''),
    );
    const { clients } = createTestClients(urlsAt(bank.url));
    const error = await expectUpstreamError(clients.transaction.authorize(REDIRECT), 'UPSTREAM_REJECTED');
    expect(error.extensions).toMatchObject({ responseCode: 'access_denied', responseMessage: 'User denied' });
  });

  it('op 4: a 302 without a code is an invalid response', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(302).header('location', '/login').text(''));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.transaction.authorize(REDIRECT), 'UPSTREAM_INVALID_RESPONSE');
  });

  it('op 4: accepts the code under data', async () => {
    const bank = await startFakeBank((_request, reply) => reply.json({ data: { code: 'abc' } }));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.transaction.authorize(REDIRECT)).resolves.toEqual({ code: 'abc', redirectUri: REDIRECT });
  });

  it('op 5: invalid_grant is a refusal carrying the error and its description', async () => {
    const bank = await startFakeBank((_request, reply) =>
      reply.status(400).json({ error: 'invalid_grant', error_description: 'The code has expired' }),
    );
    const { clients } = createTestClients(urlsAt(bank.url));
    const error = await expectUpstreamError(clients.transaction.exchangeCode({ code: 'old', redirectUri: REDIRECT }), 'UPSTREAM_REJECTED');
    expect(error.extensions).toMatchObject({ responseCode: 'invalid_grant', responseMessage: 'The code has expired' });
  });

  it('op 5: invalid_client is UPSTREAM_UNAUTHORIZED, even as a 400', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(400).json({ error: 'invalid_client' }));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.transaction.exchangeCode({ code: 'c', redirectUri: REDIRECT }), 'UPSTREAM_UNAUTHORIZED');
  });

  it('op 5: another 400 is UPSTREAM_BAD_REQUEST', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(400).json({ error: 'unsupported_grant_type' }));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.transaction.exchangeCode({ code: 'c', redirectUri: REDIRECT }), 'UPSTREAM_BAD_REQUEST');
  });

  it('op 5: accepts camelCase names under data', async () => {
    const bank = await startFakeBank((_request, reply) =>
      reply.json({ data: { accessToken: 'at', tokenType: 'Bearer', expiresIn: '3600' } }),
    );
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.transaction.exchangeCode({ code: 'c', redirectUri: REDIRECT })).resolves.toEqual({
      accessToken: 'at',
      tokenType: 'Bearer',
      expiresIn: 3600,
      refreshToken: null,
      scope: null,
    });
  });

  it('op 5: sends Basic base64(utf8(id:secret)) whatever the characters', async () => {
    const bank = await startFakeBank((_request, reply) => reply.json({ access_token: 'at' }));
    const credentials = { ...testCredentials, oauthClientId: 'cliént:ü' };
    const { clients } = createTestClients(urlsAt(bank.url), { credentials });
    await clients.transaction.exchangeCode({ code: 'c', redirectUri: REDIRECT });
    const header = bank.received[0]?.headers.authorization ?? '';
    const decoded = Buffer.from(header.replace(/^Basic /, ''), 'base64').toString('utf8');
    expect(decoded).toBe(`cliént:ü:${testSecrets.oauthClientSecret}`);
  });
});

describe('transaction client against the sandbox (ops 4-5)', () => {
  const sandbox = useRecordedSandbox();
  const clientsFor = () => createTestClients(sandbox().urls, { credentials: sandboxBankCredentials }).clients;

  it('op 4: asks for a code with the URL-encoded query and a form Content-Type', async () => {
    const authorization = await clientsFor().transaction.authorize(REDIRECT);
    expect(authorization).toEqual({ code: expect.any(String), redirectUri: REDIRECT });
    const request = lastReceived(sandbox(), '/transaction/oauth/authorize/');
    expect(request).toMatchObject({
      method: 'GET',
      path: '/bank/transaction/oauth/authorize/',
      query: { response_type: 'code', client_id: sandboxCredentials.oauthClientId, redirect_uri: REDIRECT },
    });
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it('op 5: exchanges the code with Basic client credentials and a form body', async () => {
    const clients = clientsFor();
    const { code } = await clients.transaction.authorize(REDIRECT);
    const token = await clients.transaction.exchangeCode({ code, redirectUri: REDIRECT });
    expect(token).toEqual({
      accessToken: expect.any(String),
      tokenType: 'Bearer',
      expiresIn: 3600,
      refreshToken: expect.any(String),
      scope: 'transactions',
    });

    const request = lastReceived(sandbox(), '/transaction/oauth/authorize/');
    expect(request).toMatchObject({ method: 'POST', path: '/gateway/transaction/oauth/authorize/' });
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.headers.authorization).toBe(
      sandbox().fingerprint(basic(sandboxCredentials.oauthClientId, sandboxCredentials.oauthClientSecret)),
    );
    // redirect_uri travels percent-encoded in the form, and decodes back exactly.
    expect(request.body).toContain(`redirect_uri=${encodeURIComponent(REDIRECT).replace(/%20/g, '+')}`);
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      grant_type: 'authorization_code',
      client_id: sandboxCredentials.oauthClientId,
      code: sandbox().fingerprint(code),
      redirect_uri: REDIRECT,
    });
  });

  it('op 5: a code used twice is refused as invalid_grant', async () => {
    const clients = clientsFor();
    const { code } = await clients.transaction.authorize(REDIRECT);
    await clients.transaction.exchangeCode({ code, redirectUri: REDIRECT });
    const error = await expectUpstreamError(
      clients.transaction.exchangeCode({ code, redirectUri: REDIRECT }),
      'UPSTREAM_REJECTED',
      sandboxSecrets,
    );
    expect(error.extensions).toMatchObject({ responseCode: 'invalid_grant', responseMessage: expect.any(String) });
  });

  it('op 5: a wrong client secret is UPSTREAM_UNAUTHORIZED', async () => {
    const credentials = { ...sandboxBankCredentials, oauthClientSecret: testCredentials.oauthClientSecret };
    const clients = createTestClients(sandbox().urls, { credentials }).clients;
    const { code } = await clients.transaction.authorize(REDIRECT);
    await expectUpstreamError(clients.transaction.exchangeCode({ code, redirectUri: REDIRECT }), 'UPSTREAM_UNAUTHORIZED', [
      ...sandboxSecrets,
      testSecrets.oauthClientSecret,
    ]);
  });

  it('op 4: an unknown client id is UPSTREAM_UNAUTHORIZED', async () => {
    const credentials = { ...sandboxBankCredentials, oauthClientId: 'someone-else' };
    const clients = createTestClients(sandbox().urls, { credentials }).clients;
    await expectUpstreamError(clients.transaction.authorize(REDIRECT), 'UPSTREAM_UNAUTHORIZED', sandboxSecrets);
  });
});
