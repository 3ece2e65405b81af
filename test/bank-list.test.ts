import { describe, expect, it } from 'vitest';
import { startApp } from './helpers/app.ts';

const BANK_LIST_PATH = '/bank/v1/account/NIP/banks';

// Account.bank and Bank references go through one DataLoader over a process-wide cache of the bank
// list: one upstream call per request at most, none within the TTL, one refresh in flight at most.
describe('bank list cache', () => {
  const bankListCalls = (app: Awaited<ReturnType<typeof startApp>>['app']) =>
    app.sandbox!.received.filter((r) => r.path === BANK_LIST_PATH).length;

  it('makes one bank-list call for a request that resolves many banks and accounts', async () => {
    const { query, app } = await startApp();
    const { errors } = await query(`{
      banks { code name }
      a: bank(code: "000013") { name } b: bank(code: "000014") { name } c: bank(code: "000015") { name }
      x: account(accountNumber: "0123456789", bankCode: "000023") { bank { name } }
      y: account(accountNumber: "0011223344", bankCode: "000013") { bank { name } }
      z: postingAccount(accountNumber: "9876543210", beneficiaryBank: "000015") { bank { name } }
    }`);
    expect(errors).toBeUndefined();
    expect(bankListCalls(app)).toBe(1);
  });

  it('makes no bank-list call for the next request within the TTL', async () => {
    const { query, app } = await startApp();
    await query('{ banks { code } }');
    await query('{ bank(code: "000013") { name } }');
    await query('{ account(accountNumber: "0123456789", bankCode: "000023") { bank { name } } }');
    expect(bankListCalls(app)).toBe(1);
  });

  it('refetches once the TTL has passed, once per request even with a TTL of 0', async () => {
    const { query, app } = await startApp({ BANK_LIST_TTL_S: '0' });
    await query('{ banks { code } a: bank(code: "000013") { name } }');
    await query('{ banks { code } }');
    expect(bankListCalls(app)).toBe(2);
  });

  it('shares one refresh among concurrent requests', async () => {
    const { query, app } = await startApp();
    const results = await Promise.all(Array.from({ length: 25 }, () => query('{ bank(code: "000016") { name } }')));
    expect(results.every((r) => r.data!.bank.name === 'First Bank of Nigeria')).toBe(true);
    expect(bankListCalls(app)).toBe(1);
  });
});
