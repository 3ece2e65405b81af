import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from './credentials.ts';
import { accountHeaders, call, useSandbox } from '../../test/helpers/sandbox.ts';

const sandbox = useSandbox();

describe('op 1, NIP name enquiry', () => {
  it('answers the account record of a known account at its bank', async () => {
    const { status, json } = await call(`${sandbox().urls.base}/account/NIP?account_number=0123456789&bank_code=000023`, {
      headers: accountHeaders,
    });
    expect(status).toBe(200);
    expect(json).toEqual({
      bankCode: '000023',
      accountName: 'ADAEZE CHIOMA OKONKWO',
      transactionReference: expect.stringMatching(/^NIP\d{18}$/),
      bvn: '22212345678',
      responseMessage: 'Approved or completed successfully',
      accountNumber: '0123456789',
      responseCode: '00',
    });
  });

  it('gives every enquiry a fresh transactionReference', async () => {
    const url = `${sandbox().urls.base}/account/NIP?account_number=0123456789`;
    const first = await call(url, { headers: accountHeaders });
    const second = await call(url, { headers: accountHeaders });
    expect(first.json.transactionReference).not.toBe(second.json.transactionReference);
  });

  it('finds the account at any bank when bank_code is not given', async () => {
    const { json } = await call(`${sandbox().urls.base}/account/NIP?account_number=9876543210`, { headers: accountHeaders });
    expect(json).toMatchObject({ bankCode: '000015', accountName: 'NGOZI EZE TRADING LTD', responseCode: '00' });
  });

  it('sends an empty bvn for an account without one', async () => {
    const { json } = await call(`${sandbox().urls.base}/account/NIP?account_number=1234567890`, { headers: accountHeaders });
    expect(json).toMatchObject({ accountName: 'BABATUNDE ADEWALE BELLO', bvn: '', responseCode: '00' });
  });

  it('serves the /v1 form of the path too', async () => {
    const { status, json } = await call(`${sandbox().urls.base}/v1/account/NIP?account_number=0011223344`, {
      headers: accountHeaders,
    });
    expect(status).toBe(200);
    expect(json).toMatchObject({ accountNumber: '0011223344', bankCode: '000013', accountName: 'CHUKWUEMEKA OBI' });
  });

  it.each([
    ['an unknown account number', 'account_number=5555555555'],
    ['a known number at another bank', 'account_number=0123456789&bank_code=000013'],
  ])('answers 200 with code 25 for %s', async (_name, query) => {
    const { status, json } = await call(`${sandbox().urls.base}/account/NIP?${query}`, { headers: accountHeaders });
    expect(status).toBe(200);
    expect(json).toEqual({ responseCode: '25', responseMessage: 'Unable to locate record' });
  });

  it('answers 400 with code 99 when account_number is missing', async () => {
    const { status, json } = await call(`${sandbox().urls.base}/account/NIP?bank_code=000023`, { headers: accountHeaders });
    expect(status).toBe(400);
    expect(json).toEqual({ responseCode: '99', responseMessage: expect.any(String) });
  });
});

describe('op 2, bank list', () => {
  it('lists at least 20 banks with 6-digit NIP codes', async () => {
    const { status, json } = await call(`${sandbox().urls.base}/v1/account/NIP/banks`, { headers: accountHeaders });
    expect(status).toBe(200);
    expect(json).toMatchObject({ responseCode: '00', responseMessage: 'Approved or completed successfully' });
    expect(json.banks.length).toBeGreaterThanOrEqual(20);
    for (const bank of json.banks) expect(Object.keys(bank).sort()).toEqual(['bankCode', 'bankName']);
    expect(json.banks.every((bank: { bankCode: string }) => /^\d{6}$/.test(bank.bankCode))).toBe(true);
    expect(json.banks).toContainEqual({ bankCode: '000023', bankName: 'Providus Bank' });
    expect(json.banks).toContainEqual({ bankCode: '100004', bankName: 'OPay' });
  });
});

describe('op 3, BVN lookup', () => {
  it('answers the details of a known BVN', async () => {
    const { status, json } = await call(`${sandbox().urls.base}/v1/account/bvn?number=22212345678`, { headers: accountHeaders });
    expect(status).toBe(200);
    expect(json).toMatchObject({
      responseCode: '00',
      responseMessage: 'Approved or completed successfully',
      bvn: '22212345678',
      firstName: 'Adaeze',
      middleName: 'Chioma',
      lastName: 'Okonkwo',
      dateOfBirth: '1990-04-12',
      phoneNumber: '08031234567',
      gender: 'Female',
      enrollmentBank: '000023',
      nameOnCard: expect.any(String),
    });
  });

  it('answers 200 with code 25 for an unknown BVN', async () => {
    const { status, json } = await call(`${sandbox().urls.base}/v1/account/bvn?number=22200000000`, { headers: accountHeaders });
    expect(status).toBe(200);
    expect(json).toEqual({ responseCode: '25', responseMessage: 'Unable to locate record' });
  });

  it('answers 400 when number is missing', async () => {
    const { status, json } = await call(`${sandbox().urls.base}/v1/account/bvn`, { headers: accountHeaders });
    expect(status).toBe(400);
    expect(json.responseCode).toBe('99');
  });
});

describe('account area credentials', () => {
  const paths = ['/account/NIP?account_number=0123456789', '/v1/account/NIP/banks', '/v1/account/bvn?number=22212345678'];
  const wrong = [
    ['no credentials at all', {}],
    ['no Authorization', { username: accountHeaders.username, password: accountHeaders.password }],
    ['no Username', { authorization: accountHeaders.authorization, password: accountHeaders.password }],
    ['no Password', { authorization: accountHeaders.authorization, username: accountHeaders.username }],
    ['a wrong token', { ...accountHeaders, authorization: 'not-the-token' }],
    ['the token behind a scheme', { ...accountHeaders, authorization: `Bearer ${sandboxCredentials.apiToken}` }],
    ['a wrong username', { ...accountHeaders, username: 'someone-else' }],
    ['a wrong password', { ...accountHeaders, password: 'not-the-password' }],
  ] as const;

  for (const path of paths) {
    it.each(wrong)(`refuses ${path.split('?')[0]} with 401 and code 401 given %s`, async (_name, headers) => {
      const { status, json } = await call(`${sandbox().urls.base}${path}`, { headers: { ...headers } });
      expect(status).toBe(401);
      expect(json).toEqual({ responseCode: '401', responseMessage: expect.any(String) });
    });
  }
});
