import { describe, expect, it } from 'vitest';
import { startApp } from './helpers/app.ts';
import { bankCalls } from './helpers/metrics.ts';

// Our own validation refuses bad input with BAD_USER_INPUT naming the argument, before any call
// reaches the bank (the app's /metrics counts no bank call).
describe('input validation', () => {
  const cases: [string, string, string][] = [
    ['an account number of 9 digits', '{ account(accountNumber: "012345678") { accountName } }', 'accountNumber'],
    ['an account number with letters', '{ account(accountNumber: "01234567AB") { accountName } }', 'accountNumber'],
    ['a bank code that is not all digits', '{ account(accountNumber: "0123456789", bankCode: "GTB") { accountName } }', 'bankCode'],
    ['a BVN of 10 digits', '{ bvn(number: "2221234567") { bvn } }', 'number'],
    [
      'a posting bank code with letters',
      '{ postingAccount(accountNumber: "0123456789", beneficiaryBank: "00001x") { accountName } }',
      'beneficiaryBank',
    ],
    ['a bank code with letters', '{ bank(code: "ABC") { name } }', 'code'],
    ['a bill category of 0', '{ bills(categoryId: 0) { name } }', 'categoryId'],
    ['a redirect URI that is not absolute', 'mutation { transactionAuthorize(redirectUri: "/callback") { code } }', 'redirectUri'],
    ['an e-mail without @', 'mutation { merchantLogin(email: "merchant", password: "x") { accessToken } }', 'email'],
    ['an empty refresh token', 'mutation { merchantRefreshSession(refreshToken: " ") { accessToken } }', 'refreshToken'],
    ['a page of 101', '{ collectionNotifications(first: 101) { nodes { settlementId } } }', 'first'],
    ['a cursor we did not issue', '{ collectionNotifications(after: "not-a-cursor!") { nodes { settlementId } } }', 'after'],
  ];

  it.each(cases)('refuses %s before calling the bank', async (_name, document, argumentName) => {
    const app = await startApp();
    const { errors } = await app.query(document);
    expect(errors).toHaveLength(1);
    expect(errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argumentName });
    expect(errors![0]!.message).toContain(argumentName);
    expect(await bankCalls(app)).toBe(0);
  });
});
