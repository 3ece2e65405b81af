import { describe, expect, it } from 'vitest';
import { startFakeBank } from '../../test/helpers/fake-bank.ts';
import { lastReceived, useRecordedSandbox } from '../../test/helpers/sandbox.ts';
import { sandboxCredentials } from '../sandbox/credentials.ts';
import { Secret } from '../secret.ts';
import { createTestClients, expectUpstreamError, sandboxBankCredentials, sandboxSecrets, urlsAt } from '../../test/helpers/bank-clients.ts';

describe('account client, odd answers', () => {
  it('calls a bank list without a banks array an invalid response', async () => {
    const bank = await startFakeBank((_request, reply) => reply.json({ responseCode: '00', responseMessage: 'Approved' }));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.account.listBanks(), 'UPSTREAM_INVALID_RESPONSE');
  });

  it('calls a bank entry without a string bankCode an invalid response', async () => {
    const bank = await startFakeBank((_request, reply) =>
      reply.json({ responseCode: '00', banks: [{ bankCode: 23, bankName: 'Providus Bank' }] }),
    );
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.account.listBanks(), 'UPSTREAM_INVALID_RESPONSE');
  });

  it('reads BVN details under data and in snake_case', async () => {
    const body = {
      responseCode: '00',
      data: { bvn: '22212345678', first_name: 'Adaeze', surname: 'Okonkwo', dob: '1990-04-12', phone: '0803' },
    };
    const bank = await startFakeBank((_request, reply) => reply.json(body));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.account.lookupBvn('22212345678')).resolves.toEqual({
      bvn: '22212345678',
      firstName: 'Adaeze',
      lastName: 'Okonkwo',
      middleName: null,
      dateOfBirth: '1990-04-12',
      phoneNumber: '0803',
      raw: body,
    });
  });

  it('calls an account record without accountName an invalid response', async () => {
    const bank = await startFakeBank((_request, reply) =>
      reply.json({ responseCode: '00', accountNumber: '0123456789', bankCode: '000023' }),
    );
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.account.lookupAccount({ accountNumber: '0123456789' }), 'UPSTREAM_INVALID_RESPONSE');
  });
});

describe('account client against the sandbox (ops 1-3)', () => {
  const sandbox = useRecordedSandbox();
  const clientsFor = () => createTestClients(sandbox().urls, { credentials: sandboxBankCredentials }).clients;

  it('op 1: sends the token headers and the query, and maps the account record', async () => {
    const account = await clientsFor().account.lookupAccount({ accountNumber: '0123456789', bankCode: '000023' });
    expect(account).toEqual({
      accountNumber: '0123456789',
      bankCode: '000023',
      accountName: 'ADAEZE CHIOMA OKONKWO',
      bvn: '22212345678',
      transactionReference: expect.any(String),
    });
    const request = lastReceived(sandbox(), '/account/NIP');
    expect(request).toMatchObject({
      method: 'GET',
      path: '/bank/account/NIP',
      query: { account_number: '0123456789', bank_code: '000023' },
      body: '',
    });
    expect(request.headers).toMatchObject({
      authorization: sandbox().fingerprint(sandboxCredentials.apiToken),
      username: sandboxCredentials.username,
      password: sandbox().fingerprint(sandboxCredentials.password),
      accept: 'application/json',
      'user-agent': 'bank-subgraph',
    });
  });

  it('op 1: leaves bank_code out when not given, and maps an empty BVN to null', async () => {
    const account = await clientsFor().account.lookupAccount({ accountNumber: '1234567890' });
    expect(account).toMatchObject({ accountNumber: '1234567890', bankCode: '000023', bvn: null });
    expect(lastReceived(sandbox(), '/account/NIP').query).toEqual({ account_number: '1234567890' });
  });

  it('op 1: an unknown account is a refusal carrying the bank code 25', async () => {
    const error = await expectUpstreamError(
      clientsFor().account.lookupAccount({ accountNumber: '5555555555', bankCode: '000023' }),
      'UPSTREAM_REJECTED',
      sandboxSecrets,
    );
    expect(error.extensions).toMatchObject({ responseCode: '25', responseMessage: 'Unable to locate record' });
  });

  it('op 1: wrong configured credentials are UPSTREAM_UNAUTHORIZED', async () => {
    const credentials = { ...sandboxBankCredentials, password: new Secret('not-the-password') };
    const { clients } = createTestClients(sandbox().urls, { credentials });
    await expectUpstreamError(clients.account.lookupAccount({ accountNumber: '0123456789' }), 'UPSTREAM_UNAUTHORIZED', [
      ...sandboxSecrets,
      'not-the-password',
    ]);
  });

  it('op 2: lists the banks with their 6-digit codes, under the /v1 path', async () => {
    const banks = await clientsFor().account.listBanks();
    expect(banks.length).toBeGreaterThanOrEqual(20);
    for (const bank of banks) expect(bank.code).toMatch(/^\d{6}$/);
    expect(banks).toContainEqual({ code: '000023', name: expect.any(String) });
    expect(lastReceived(sandbox(), '/banks')).toMatchObject({ method: 'GET', path: '/bank/v1/account/NIP/banks' });
    expect(lastReceived(sandbox(), '/banks').headers.authorization).toBe(sandbox().fingerprint(sandboxCredentials.apiToken));
  });

  it('op 3: looks the BVN up by number and keeps the whole body as raw', async () => {
    const details = await clientsFor().account.lookupBvn('22212345678');
    expect(details).toMatchObject({
      bvn: '22212345678',
      firstName: 'Adaeze',
      middleName: 'Chioma',
      lastName: 'Okonkwo',
      dateOfBirth: '1990-04-12',
      phoneNumber: '08031234567',
    });
    expect(details.raw).toMatchObject({ responseCode: '00', bvn: '22212345678', gender: 'Female' });
    const request = lastReceived(sandbox(), '/account/bvn');
    expect(request).toMatchObject({ method: 'GET', path: '/bank/v1/account/bvn', query: { number: '22212345678' } });
    expect(request.headers.username).toBe(sandboxCredentials.username);
  });

  it('op 3: an unknown BVN is a refusal', async () => {
    const error = await expectUpstreamError(clientsFor().account.lookupBvn('22200000000'), 'UPSTREAM_REJECTED', sandboxSecrets);
    expect(error.extensions.responseCode).toBe('25');
  });
});
