import { describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { startCountingBank, startLiveApp, type BankOperation } from './helpers/counting-bank.ts';
import type { FakeBankReply } from './helpers/fake-bank.ts';
import { captureLogs } from './helpers/logs.ts';
import { bankCalls, scrapeSum } from './helpers/metrics.ts';
import { waitFor } from './helpers/wait.ts';

// Account.bank and Bank references go through one DataLoader over a process-wide cache of the bank
// list: one upstream call per request at most, none within the TTL, one refresh in flight at most.
describe('bank list cache', () => {
  /** Calls to the bank's list of banks (op 2), as the app's /metrics counts them. */
  const bankListCalls = (app: TestApp) => bankCalls(app, { operation: 'listBanks' });

  it('makes one bank-list call for a request that resolves many banks and accounts', async () => {
    const app = await startApp();
    const { errors } = await app.query(`{
      banks { code name }
      a: bank(code: "000013") { name } b: bank(code: "000014") { name } c: bank(code: "000015") { name }
      x: account(accountNumber: "0123456789", bankCode: "000023") { bank { name } }
      y: account(accountNumber: "0011223344", bankCode: "000013") { bank { name } }
      z: postingAccount(accountNumber: "9876543210", beneficiaryBank: "000015") { bank { name } }
    }`);
    expect(errors).toBeUndefined();
    expect(await bankListCalls(app)).toBe(1);
  });

  it('makes no bank-list call for the next request within the TTL', async () => {
    const app = await startApp();
    await app.query('{ banks { code } }');
    await app.query('{ bank(code: "000013") { name } }');
    await app.query('{ account(accountNumber: "0123456789", bankCode: "000023") { bank { name } } }');
    expect(await bankListCalls(app)).toBe(1);
  });

  it('refetches once the TTL has passed, once per request even with a TTL of 0', async () => {
    const app = await startApp({ BANK_LIST_TTL_S: '0' });
    await app.query('{ banks { code } a: bank(code: "000013") { name } }');
    await app.query('{ banks { code } }');
    expect(await bankListCalls(app)).toBe(2);
  });

  it('shares one refresh among concurrent requests', async () => {
    const app = await startApp();
    const results = await Promise.all(Array.from({ length: 25 }, () => app.query('{ bank(code: "000016") { name } }')));
    expect(results.every((r) => r.data!.bank.name === 'First Bank of Nigeria')).toBe(true);
    expect(await bankListCalls(app)).toBe(1);
  });
});

type Fault = (reply: FakeBankReply) => void;
const DOWN: Fault = (reply) => reply.status(503).text('Service Unavailable');
const GARBLED: Fault = (reply) => reply.status(200).text('<html><body>Gateway</body></html>', 'text/html');
const REFUSED: Fault = (reply) => reply.status(401).json({ error: 'Unauthorized' });

/** A live bank whose reference lists fail as `faults` says (answered normally when unset), and an app over it. */
async function startReferenceBank(env: Record<string, string>) {
  const faults: Partial<Record<BankOperation, Fault>> = {};
  const bank = await startCountingBank({
    intercept: (operation, _request, reply) => {
      const fault = faults[operation];
      fault?.(reply);
      return fault !== undefined;
    },
  });
  const { logger, logs } = captureLogs();
  const app = await startLiveApp(bank.url, env, { logger });
  const refreshes = (list: string, outcome: string) => scrapeSum(app, 'bank_list_refreshes_total', { list, outcome });
  const staleLines = (list: string) => logs.filter((line) => line.msg === STALE_LINE && line.list === list);
  return { bank, app, faults, refreshes, staleLines };
}

const STALE_LINE = 'reference list refresh failed: serving the last good copy';

const LISTS = [
  { list: 'banks', operation: 'listBanks' as const, query: '{ banks { code name } }' },
  // Every use of the categories shares their cache: the list, one category, and entity references.
  {
    list: 'billCategories',
    operation: 'listCategories' as const,
    query: `{ billCategories { id name } billCategory(id: 2) { name }
      _entities(representations: [{ __typename: "BillCategory", id: 3 }]) { ... on BillCategory { name } } }`,
  },
];

// Stale-if-error: a refresh that finds the bank unavailable or garbled answers with the last good
// copy, for up to BANK_LIST_STALE_S past its freshness; anything else, or no copy yet, is an error.
describe.each(LISTS)('stale-if-error of the $list', ({ list, operation, query }) => {
  it.each([
    { fault: 'a 503', answer: DOWN, code: 'UPSTREAM_UNAVAILABLE' },
    { fault: 'an HTML page', answer: GARBLED, code: 'UPSTREAM_INVALID_RESPONSE' },
  ])('serves the last good copy when a refresh meets $fault, counted and logged once', async ({ answer, code }) => {
    const { app, faults, refreshes, staleLines } = await startReferenceBank({ BANK_LIST_TTL_S: '0' });
    const fresh = await app.query(query);
    expect(fresh.errors).toBeUndefined();

    faults[operation] = answer;
    const stale = await app.query(query);
    expect(stale.errors).toBeUndefined();
    expect(stale.data).toEqual(fresh.data);
    expect(await refreshes(list, 'stale')).toBe(1);
    expect(await refreshes(list, 'error')).toBe(0);
    expect(staleLines(list)).toEqual([expect.objectContaining({ level: 40, code, ageS: expect.any(Number) })]);
  });

  it('serves the last good copy once its TTL has run out and the refresh fails', async () => {
    const { bank, app, faults, refreshes } = await startReferenceBank({ BANK_LIST_TTL_S: '1' });
    const fresh = await app.query(query);
    faults[operation] = GARBLED;
    // Fresh for a second: no refresh until then; the first request after it refreshes, and fails.
    const stale = await waitFor(async () => {
      const response = await app.query(query);
      return bank.calls(operation) > 1 ? response : undefined;
    });
    expect(stale.errors).toBeUndefined();
    expect(stale.data).toEqual(fresh.data);
    expect(await refreshes(list, 'stale')).toBe(1);
  });

  it.each([
    { fault: 'a 503', answer: DOWN, code: 'UPSTREAM_UNAVAILABLE' },
    { fault: 'an HTML page', answer: GARBLED, code: 'UPSTREAM_INVALID_RESPONSE' },
  ])('lets $fault stand when no good copy exists yet', async ({ answer, code }) => {
    const { app, faults, refreshes, staleLines } = await startReferenceBank({});
    faults[operation] = answer;
    const response = await app.query(query);
    expect(response.errors![0]!.extensions).toEqual({ code });
    expect(await refreshes(list, 'error')).toBe(1);
    expect(await refreshes(list, 'stale')).toBe(0);
    expect(staleLines(list)).toEqual([]);
  });

  it('serves no copy older than BANK_LIST_STALE_S past its freshness', async () => {
    const { app, faults, refreshes } = await startReferenceBank({ BANK_LIST_TTL_S: '0', BANK_LIST_STALE_S: '1' });
    await app.query(query);
    faults[operation] = GARBLED;
    expect((await app.query(query)).errors).toBeUndefined();
    // Stale answers until the copy is a second past its freshness, then the error.
    const failed = await waitFor(async () => {
      const response = await app.query(query);
      return response.errors === undefined ? undefined : response;
    });
    expect(failed.errors![0]!.extensions).toEqual({ code: 'UPSTREAM_INVALID_RESPONSE' });
    expect(await refreshes(list, 'error')).toBe(1);
  });

  it('serves nothing stale when BANK_LIST_STALE_S=0', async () => {
    const { app, faults, refreshes, staleLines } = await startReferenceBank({ BANK_LIST_TTL_S: '0', BANK_LIST_STALE_S: '0' });
    await app.query(query);
    faults[operation] = DOWN;
    expect((await app.query(query)).errors![0]!.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(await refreshes(list, 'stale')).toBe(0);
    expect(staleLines(list)).toEqual([]);
  });

  it('serves nothing stale when the bank refuses our credentials, and keeps the copy for a later outage', async () => {
    const { app, faults, refreshes } = await startReferenceBank({ BANK_LIST_TTL_S: '0' });
    const fresh = await app.query(query);
    faults[operation] = REFUSED;
    expect((await app.query(query)).errors![0]!.extensions).toEqual({ code: 'UPSTREAM_UNAUTHORIZED' });
    expect(await refreshes(list, 'error')).toBe(1);

    faults[operation] = DOWN;
    expect((await app.query(query)).data).toEqual(fresh.data);
    expect(await refreshes(list, 'stale')).toBe(1);
  });
});

describe('personal data', () => {
  it('is never served stale: a name enquiry the bank cannot answer fails, whatever was answered before', async () => {
    const { app, faults } = await startReferenceBank({});
    const enquiry = '{ account(accountNumber: "0123456789", bankCode: "000023") { accountName } }';
    expect((await app.query(enquiry)).data!.account.accountName).toBe('ADAEZE CHIOMA OKONKWO');
    faults.lookupAccount = DOWN;
    const failed = await app.query(enquiry);
    expect(failed.errors![0]!.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(failed.data).toEqual({ account: null });
  });
});
