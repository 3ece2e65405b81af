import { describe, expect, it } from 'vitest';
import { startFakeBank } from '../../test/helpers/fake-bank.ts';
import { lastReceived, useRecordedSandbox } from '../../test/helpers/sandbox.ts';
import { sandboxCredentials } from '../sandbox/credentials.ts';
import { Secret } from '../secret.ts';
import { createTestClients, expectUpstreamError, sandboxBankCredentials, sandboxSecrets, urlsAt } from '../../test/helpers/bank-clients.ts';

const FAILURE = { requestSuccessful: false, responseMessage: 'Operation failed', responseCode: '11' };

describe('posting client, odd answers', () => {
  it.each([
    [400, 'UPSTREAM_BAD_REQUEST'],
    [401, 'UPSTREAM_UNAUTHORIZED'],
    [500, 'UPSTREAM_UNAVAILABLE'],
  ] as const)('maps a %i failure body to %s, carrying responseCode 11', async (status, code) => {
    const bank = await startFakeBank((_request, reply) => reply.status(status).json(FAILURE));
    const { clients } = createTestClients(urlsAt(bank.url));
    const error = await expectUpstreamError(
      clients.posting.lookupAccount({ accountNumber: '0123456789', beneficiaryBank: '000023' }),
      code,
    );
    expect(error.extensions).toMatchObject({ responseCode: '11', responseMessage: 'Operation failed' });
  });
});

describe('posting client against the sandbox (op 13)', () => {
  const sandbox = useRecordedSandbox();

  it('sends the credentials in the JSON body only, and maps the account record', async () => {
    const { clients } = createTestClients(sandbox().urls, { credentials: sandboxBankCredentials });
    const account = await clients.posting.lookupAccount({ accountNumber: '0123456789', beneficiaryBank: '000023' });
    expect(account).toEqual({
      accountNumber: '0123456789',
      bankCode: '000023',
      accountName: 'ADAEZE CHIOMA OKONKWO',
      bvn: '22212345678',
      transactionReference: expect.any(String),
    });

    const request = lastReceived(sandbox(), '/GetNIPAccount');
    expect(request).toMatchObject({ method: 'POST', path: '/posting/postingrest/GetNIPAccount' });
    expect(request.headers).toMatchObject({ accept: 'application/json', 'content-type': 'application/json' });
    expect(request.headers.authorization).toBeUndefined();
    expect(JSON.parse(request.body)).toEqual({
      accountNumber: '0123456789',
      beneficiaryBank: '000023',
      userName: sandboxCredentials.postingUsername,
      password: sandbox().fingerprint(sandboxCredentials.postingPassword),
    });
  });

  it('maps an account without BVN to bvn null', async () => {
    const { clients } = createTestClients(sandbox().urls, { credentials: sandboxBankCredentials });
    await expect(clients.posting.lookupAccount({ accountNumber: '1234567890', beneficiaryBank: '000023' })).resolves.toMatchObject({
      bvn: null,
      bankCode: '000023',
    });
  });

  it('an unknown account is a refusal with the bank code', async () => {
    const { clients } = createTestClients(sandbox().urls, { credentials: sandboxBankCredentials });
    const error = await expectUpstreamError(
      clients.posting.lookupAccount({ accountNumber: '5555555555', beneficiaryBank: '000023' }),
      'UPSTREAM_REJECTED',
      sandboxSecrets,
    );
    expect(error.extensions.responseCode).toBe('25');
  });

  it('wrong configured credentials are UPSTREAM_UNAUTHORIZED with responseCode 11', async () => {
    const credentials = { ...sandboxBankCredentials, postingPassword: new Secret('wrong-posting-pw') };
    const { clients } = createTestClients(sandbox().urls, { credentials });
    const error = await expectUpstreamError(
      clients.posting.lookupAccount({ accountNumber: '0123456789', beneficiaryBank: '000023' }),
      'UPSTREAM_UNAUTHORIZED',
      [...sandboxSecrets, 'wrong-posting-pw'],
    );
    expect(error.extensions).toMatchObject({ responseCode: '11', responseMessage: 'Operation failed' });
  });
});
