import { describe, expect, it } from 'vitest';
import { startApp } from './helpers/app.ts';
import { bankCalls } from './helpers/metrics.ts';

// Every query and mutation of the contract, end to end: HTTP in, the in-process sandbox bank
// reached over real HTTP, the answer out.
describe('operations on the embedded default', () => {
  it('lists the banks, each with a 6-digit code', async () => {
    const { query } = await startApp();
    const { data, errors } = await query('{ banks { code name } }');
    expect(errors).toBeUndefined();
    expect(data!.banks.length).toBeGreaterThanOrEqual(20);
    expect(data!.banks.every((bank: { code: string }) => /^\d{6}$/.test(bank.code))).toBe(true);
    expect(data!.banks).toContainEqual({ code: '000023', name: 'Providus Bank' });
  });

  it('finds one bank by code, and null for a code the list lacks', async () => {
    const { query } = await startApp();
    const { data } = await query('{ gtb: bank(code: "000013") { name } none: bank(code: "999999") { name } }');
    expect(data).toEqual({ gtb: { name: 'GTBank' }, none: null });
  });

  it('looks an account up with its bank', async () => {
    const { query } = await startApp();
    const { data, errors } = await query(
      '{ account(accountNumber: "0123456789", bankCode: "000023") { accountNumber bankCode accountName bvn transactionReference bank { code name } } }',
    );
    expect(errors).toBeUndefined();
    expect(data!.account).toMatchObject({
      accountNumber: '0123456789',
      bankCode: '000023',
      accountName: 'ADAEZE CHIOMA OKONKWO',
      bvn: '22212345678',
      bank: { code: '000023', name: 'Providus Bank' },
    });
  });

  it('looks an account up without a bank code, and gives null for a BVN the bank left empty', async () => {
    const { query } = await startApp();
    const { data } = await query('{ account(accountNumber: "1234567890") { accountName bankCode bvn } }');
    expect(data!.account).toEqual({ accountName: 'BABATUNDE ADEWALE BELLO', bankCode: '000023', bvn: null });
  });

  it("passes the bank's refusal of an unknown account on as UPSTREAM_REJECTED with its code", async () => {
    const { query } = await startApp();
    const { data, errors } = await query('{ account(accountNumber: "5555555555", bankCode: "000023") { accountName } }');
    expect(data!.account).toBeNull();
    expect(errors![0]!.extensions).toMatchObject({ code: 'UPSTREAM_REJECTED', responseCode: '25' });
  });

  it('looks an account up through the posting service', async () => {
    const { query } = await startApp();
    const { data, errors } = await query(
      '{ postingAccount(accountNumber: "0011223344", beneficiaryBank: "000013") { accountName bankCode bank { name } } }',
    );
    expect(errors).toBeUndefined();
    expect(data!.postingAccount).toEqual({ accountName: 'CHUKWUEMEKA OBI', bankCode: '000013', bank: { name: 'GTBank' } });
  });

  it("reads a BVN's details and keeps the bank's whole answer", async () => {
    const { query } = await startApp();
    const { data, errors } = await query(
      '{ bvn(number: "22212345678") { bvn firstName lastName middleName dateOfBirth phoneNumber raw } }',
    );
    expect(errors).toBeUndefined();
    expect(data!.bvn).toMatchObject({ bvn: '22212345678', firstName: 'Adaeze', lastName: 'Okonkwo', dateOfBirth: '1990-04-12' });
    expect(data!.bvn.raw).toMatchObject({ responseCode: '00', bvn: '22212345678' });
  });

  it('lists bill categories with their bills, one call per category', async () => {
    const app = await startApp();
    const { data, errors } = await app.query('{ billCategories { id name listOrder bills { id name categoryId raw } } }');
    expect(errors).toBeUndefined();
    const cable = data!.billCategories.find((c: { id: number }) => c.id === 3);
    expect(cable.name).toBe('Cable TV');
    expect(cable.bills.map((b: { name: string }) => b.name)).toContain('DSTV');
    expect(cable.bills.every((b: { categoryId: number }) => b.categoryId === 3)).toBe(true);
    expect(data!.billCategories.find((c: { id: number }) => c.id === 6).bills).toEqual([]);
    expect(await bankCalls(app, { operation: 'listBills' })).toBe(data!.billCategories.length);
  });

  it('finds one bill category, its bills by id, and null for an unknown category', async () => {
    const { query } = await startApp();
    const { data } = await query('{ billCategory(id: 4) { name } bills(categoryId: 4) { name } none: billCategory(id: 99) { name } }');
    expect(data!.billCategory).toEqual({ name: 'Electricity' });
    expect(data!.bills.length).toBeGreaterThan(0);
    expect(data!.none).toBeNull();
  });

  it('signs a merchant in, refreshes the session, and signs out', async () => {
    const { query } = await startApp();
    const login = await query(
      `mutation { merchantLogin(email: "merchant@sandbox.ng", password: "Sandbox#2026") {
        accessToken refreshToken user { id email } merchant { id businessName mode review } } }`,
    );
    expect(login.errors).toBeUndefined();
    const session = login.data!.merchantLogin;
    expect(session.merchant).toMatchObject({ businessName: 'Adaeze Foods Ltd', mode: 'SANDBOX', review: 'PENDING' });
    expect(session.user.email).toBe('merchant@sandbox.ng');

    const refreshed = await query('mutation($t: String!) { merchantRefreshSession(refreshToken: $t) { accessToken refreshToken } }', {
      t: session.refreshToken,
    });
    expect(refreshed.errors).toBeUndefined();
    const tokens = refreshed.data!.merchantRefreshSession;
    expect(tokens.accessToken).not.toBe(session.accessToken);

    const logout = await query('mutation($a: String!, $r: String!) { merchantLogout(accessToken: $a, refreshToken: $r) }', {
      a: tokens.accessToken,
      r: tokens.refreshToken,
    });
    expect(logout.data).toEqual({ merchantLogout: true });
    const again = await query('mutation($t: String!) { merchantRefreshSession(refreshToken: $t) { accessToken } }', {
      t: tokens.refreshToken,
    });
    expect(again.errors![0]!.extensions!.code).toBe('UPSTREAM_REJECTED');
  });

  it('refuses a wrong merchant password as UPSTREAM_REJECTED', async () => {
    const { query } = await startApp();
    const { errors } = await query('mutation { merchantLogin(email: "merchant@sandbox.ng", password: "wrong") { accessToken } }');
    expect(errors![0]!.extensions!.code).toBe('UPSTREAM_REJECTED');
    expect(JSON.stringify(errors)).not.toContain('wrong');
  });

  it('resets a merchant password with the e-mailed code', async () => {
    const { query } = await startApp();
    const forgot = await query('mutation { merchantForgotPassword(email: "merchant@sandbox.ng") { status message } }');
    expect(forgot.data!.merchantForgotPassword.status).toBe(true);
    const reset = await query('mutation { merchantResetPassword(resetCode: "482913", password: "N3w#Passw0rd") { status message } }');
    expect(reset.data!.merchantResetPassword.status).toBe(true);
    const login = await query('mutation { merchantLogin(email: "merchant@sandbox.ng", password: "N3w#Passw0rd") { accessToken } }');
    expect(login.errors).toBeUndefined();
  });

  it('runs the OAuth authorize-then-token pair, and refuses the code a second time', async () => {
    const { query } = await startApp();
    const redirectUri = 'https://app.example.com/oauth/callback?from=test';
    const authorize = await query('mutation($u: String!) { transactionAuthorize(redirectUri: $u) { code redirectUri } }', {
      u: redirectUri,
    });
    expect(authorize.errors).toBeUndefined();
    const { code } = authorize.data!.transactionAuthorize;
    expect(authorize.data!.transactionAuthorize.redirectUri).toBe(redirectUri);

    const exchange =
      'mutation($c: String!, $u: String!) { transactionToken(code: $c, redirectUri: $u) { accessToken tokenType expiresIn scope } }';
    const token = await query(exchange, { c: code, u: redirectUri });
    expect(token.errors).toBeUndefined();
    expect(token.data!.transactionToken.accessToken).toEqual(expect.any(String));
    expect(token.data!.transactionToken.expiresIn).toBeGreaterThan(0);

    const reused = await query(exchange, { c: code, u: redirectUri });
    expect(reused.errors![0]!.extensions).toMatchObject({ code: 'UPSTREAM_REJECTED', responseCode: 'invalid_grant' });
  });
});
