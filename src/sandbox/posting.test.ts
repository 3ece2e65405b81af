import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from './credentials.ts';
import { call, postJson, useSandbox } from '../../test/helpers/sandbox.ts';

const sandbox = useSandbox();
const credentials = { userName: sandboxCredentials.postingUsername, password: sandboxCredentials.postingPassword };
const failure = { requestSuccessful: false, responseMessage: 'Operation failed', responseCode: '11' };

const getNipAccount = (body: unknown) => postJson(`${sandbox().urls.posting}/GetNIPAccount`, body);

describe('op 13, posting name enquiry', () => {
  it('answers the account record of a known account at the beneficiary bank', async () => {
    const { status, json } = await getNipAccount({ accountNumber: '2233445566', beneficiaryBank: '000014', ...credentials });
    expect(status).toBe(200);
    expect(json).toEqual({
      bankCode: '000014',
      accountName: 'FATIMA BELLO YUSUF',
      transactionReference: expect.stringMatching(/^NIP\d+$/),
      bvn: '',
      responseMessage: 'Approved or completed successfully',
      accountNumber: '2233445566',
      responseCode: '00',
    });
  });

  it.each([
    ['an unknown account', { accountNumber: '5555555555', beneficiaryBank: '000014' }],
    ['a known account at another bank', { accountNumber: '2233445566', beneficiaryBank: '000015' }],
  ])('answers 200 with code 25 for %s', async (_name, lookup) => {
    const { status, json } = await getNipAccount({ ...lookup, ...credentials });
    expect(status).toBe(200);
    expect(json).toEqual({ responseCode: '25', responseMessage: 'Unable to locate record' });
  });

  it.each([
    ['a wrong password', { ...credentials, password: 'wrong' }],
    ['a wrong userName', { ...credentials, userName: 'someone' }],
    ['no credentials', {}],
  ])('answers 401 with the failure body given %s', async (_name, given) => {
    const { status, json } = await getNipAccount({ accountNumber: '2233445566', beneficiaryBank: '000014', ...given });
    expect(status).toBe(401);
    expect(json).toEqual(failure);
  });

  it('ignores credentials sent anywhere but the body', async () => {
    const { status } = await postJson(
      `${sandbox().urls.posting}/GetNIPAccount`,
      { accountNumber: '2233445566', beneficiaryBank: '000014' },
      { username: credentials.userName, password: credentials.password },
    );
    expect(status).toBe(401);
  });

  it.each([
    ['accountNumber', { beneficiaryBank: '000014', ...credentials }],
    ['beneficiaryBank', { accountNumber: '2233445566', ...credentials }],
  ])('answers 400 with the failure body when %s is missing', async (_name, body) => {
    const { status, json } = await getNipAccount(body);
    expect(status).toBe(400);
    expect(json).toEqual(failure);
  });

  it('answers 400 with the failure body to malformed JSON', async () => {
    const { status, json } = await call(`${sandbox().urls.posting}/GetNIPAccount`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: '{"accountNumber": ',
    });
    expect(status).toBe(400);
    expect(json).toEqual(failure);
  });
});
