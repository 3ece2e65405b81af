import { describe, expect, it } from 'vitest';
import type { TestApp } from './helpers/app.ts';
import { startCountingBank, startLiveApp, type BankOperation } from './helpers/counting-bank.ts';
import { scrapeSum } from './helpers/metrics.ts';
import { waitFor } from './helpers/wait.ts';

// Identical reads in flight, across requests, share one bank call; nothing is kept past the flight.

/** How many reads of `operation` joined a call in flight (bank_shared_reads_total). */
function sharedReads(app: TestApp, operation: string, area?: string): Promise<number> {
  return scrapeSum(app, 'bank_shared_reads_total', area === undefined ? { operation } : { operation, area });
}

/** A counting bank that holds each answer of `held` until the test lets it go. */
async function startHoldingBank(held: BankOperation) {
  let release = Promise.withResolvers<void>();
  const bank = await startCountingBank({
    intercept: async (operation) => {
      if (operation === held) await release.promise;
      return false;
    },
  });
  const app = await startLiveApp(bank.url);
  return {
    bank,
    app,
    release: () => {
      release.resolve();
      release = Promise.withResolvers<void>();
    },
  };
}

const ENQUIRY = '{ account(accountNumber: "0123456789", bankCode: "000023") { accountName } }';

describe('identical reads in flight', () => {
  it('30 concurrent identical name enquiries make one bank call, and every request gets the answer', async () => {
    const { bank, app, release } = await startHoldingBank('lookupAccount');
    const responses = Array.from({ length: 30 }, () => app.query(ENQUIRY));
    // Let the bank answer only once the other 29 have joined the call in flight.
    await waitFor(async () => ((await sharedReads(app, 'lookupAccount')) === 29 ? true : undefined));
    release();
    for (const response of await Promise.all(responses)) {
      expect(response.errors).toBeUndefined();
      expect(response.data!.account.accountName).toBe('ADAEZE CHIOMA OKONKWO');
    }
    expect(bank.calls('lookupAccount')).toBe(1);

    // Nothing is kept past the flight: the next enquiry calls the bank again.
    const next = app.query(ENQUIRY);
    await bank.received.until(() => bank.calls('lookupAccount') === 2);
    release();
    expect((await next).data!.account.accountName).toBe('ADAEZE CHIOMA OKONKWO');
  });

  it('shares BVN, posting lookup and bills, and keeps different arguments apart', async () => {
    const release = Promise.withResolvers<void>();
    const bank = await startCountingBank({ intercept: () => release.promise.then(() => false) });
    const app = await startLiveApp(bank.url);
    const query = `{ bvn(number: "22212345678") { bvn } postingAccount(accountNumber: "0123456789", beneficiaryBank: "000013") { accountName }
      billCategories { id } bills(categoryId: 3) { id } }`;
    const other = '{ bvn(number: "22298765432") { bvn } bills(categoryId: 4) { id } }';
    const responses = [...Array.from({ length: 10 }, () => app.query(query)), app.query(other)];
    const joined = async () =>
      Promise.all([sharedReads(app, 'lookupBvn'), sharedReads(app, 'lookupAccount', 'posting'), sharedReads(app, 'listBills')]);
    // The categories wait on their process-wide cache's one refresh instead (bank-list.test.ts).
    await waitFor(async () => ((await joined()).every((count) => count === 9) ? true : undefined));
    release.resolve();
    for (const response of await Promise.all(responses)) expect(response.errors).toBeUndefined();
    expect(bank.calls('lookupBvn')).toBe(2);
    expect(bank.calls('postingLookup')).toBe(1);
    expect(bank.calls('listCategories')).toBe(1);
    expect(bank.calls('listBills')).toBe(2);
  });

  it('shares a failure with those who waited on it, and the next call starts afresh', async () => {
    let refuse = true;
    let release = Promise.withResolvers<void>();
    const bank = await startCountingBank({
      intercept: async (operation, _request, reply) => {
        if (operation !== 'lookupAccount' || !refuse) return false;
        await release.promise;
        reply.json({ responseCode: '25', responseMessage: 'Unable to locate record' });
        return true;
      },
    });
    const app = await startLiveApp(bank.url);
    const responses = Array.from({ length: 5 }, () => app.query(ENQUIRY));
    await waitFor(async () => ((await sharedReads(app, 'lookupAccount')) === 4 ? true : undefined));
    release.resolve();
    for (const response of await Promise.all(responses)) {
      expect(response.errors![0]!.extensions).toMatchObject({ code: 'UPSTREAM_REJECTED', responseCode: '25' });
    }
    expect(bank.calls('lookupAccount')).toBe(1);
    refuse = false;
    expect((await app.query(ENQUIRY)).data!.account.accountName).toBe('ADAEZE CHIOMA OKONKWO');
    expect(bank.calls('lookupAccount')).toBe(2);
  });

  it("never shares a wallet sign-in: each carries its caller's credentials", async () => {
    const bank = await startCountingBank();
    const app = await startLiveApp(bank.url);
    const login = 'mutation { merchantLogin(email: "merchant@sandbox.ng", password: "wrong") { accessToken } }';
    await Promise.all([app.query(login), app.query(login)]);
    expect(bank.calls('wallet')).toBe(2);
  });
});
