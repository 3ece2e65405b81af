import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { AWKWARD_AMOUNTS, referenceTotals } from './helpers/amounts.ts';
import { notificationBody, startApp, untilListed, type GraphQLResponse, type TestApp } from './helpers/app.ts';
import { confirmationOf } from './helpers/confirming.ts';
import { withMethod } from './helpers/proxy.ts';
import { openMemoryStore, urlStoreBackends } from './helpers/stores.ts';

const SUMMARY = `query($account: String, $from: DateTime!, $to: DateTime!) {
  collectionSummary(accountNumber: $account, from: $from, to: $to) {
    count refutedCount transactionAmount settledAmount feeAmount vatAmount
    days { date from to count refutedCount transactionAmount settledAmount feeAmount vatAmount }
  }
}`;

const PAGE = `query($account: String, $first: Int, $after: String, $from: DateTime, $to: DateTime) {
  collectionNotifications(accountNumber: $account, first: $first, after: $after, from: $from, to: $to) {
    nodes { settlementId transactionTime }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** Delivers bodies one by one through the webhook, each answered 00. */
async function deliverAll(app: TestApp, bodies: Record<string, unknown>[]) {
  for (const body of bodies) expect((await app.deliver(body)).reply.responseCode).toBe('00');
}

describe.each(urlStoreBackends)('collectionSummary over HTTP on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;

  test('totals what the webhook stored, exactly, per WAT day, with a transfer at 00:30 WAT on its own day', async () => {
    // Confirmation off: the sandbox bank made none of these transfers, and would refute them.
    const app = await startApp({ STORE_URL: (await backend.create()).storeUrl, COLLECTION_CONFIRMATION: 'off' });
    // The bank's tranDateTime is WAT wall-clock time; 00:30 on the 22nd is 23:30 UTC on the 21st.
    const first = AWKWARD_AMOUNTS.map((amount) => notificationBody({ transactionAmount: amount, tranDateTime: '2026-11-21 23:59:59' }));
    const second = AWKWARD_AMOUNTS.map((amount) =>
      notificationBody({
        transactionAmount: amount,
        settledAmount: amount,
        feeAmount: '0.10',
        vatAmount: '0.20',
        tranDateTime: '2026-11-22 00:30:00',
      }),
    );
    await deliverAll(app, [...first, ...second]);

    const { data, errors } = await app.query(SUMMARY, { from: '2026-11-21T00:00:00+01:00', to: '2026-11-23T00:00:00+01:00' });
    expect(errors).toBeUndefined();
    expect(data!.collectionSummary).toEqual({
      ...referenceTotals([...first, ...second]),
      days: [
        { date: '2026-11-21', from: '2026-11-21T00:00:00.000+01:00', to: '2026-11-22T00:00:00.000+01:00', ...referenceTotals(first) },
        { date: '2026-11-22', from: '2026-11-22T00:00:00.000+01:00', to: '2026-11-23T00:00:00.000+01:00', ...referenceTotals(second) },
      ],
    });
    expect(data!.collectionSummary.days[1].feeAmount).toBe(`${AWKWARD_AMOUNTS.length / 10}.00`);
  });

  test('pages collectionNotifications within [from, to), by account, with cursors', async () => {
    const app = await startApp({ STORE_URL: (await backend.create()).storeUrl });
    const times = ['08:59:59', '09:00:00', '09:20:00', '09:40:00', '09:59:59', '10:00:00'];
    const bodies = times.map((time, i) =>
      notificationBody({ tranDateTime: `2026-11-22 ${time}`, accountNumber: i % 2 ? '2233445566' : '0123456789' }),
    );
    await deliverAll(app, bodies);
    await untilListed(app, bodies.at(-1)!.settlementId);
    const range = { from: '2026-11-22T09:00:00+01:00', to: '2026-11-22T10:00:00+01:00' };

    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const { data, errors }: GraphQLResponse = await app.query(PAGE, { ...range, first: 2, after });
      expect(errors).toBeUndefined();
      seen.push(...data!.collectionNotifications.nodes.map((n: { settlementId: string }) => n.settlementId));
      if (!data!.collectionNotifications.pageInfo.hasNextPage) break;
      after = data!.collectionNotifications.pageInfo.endCursor;
    }
    expect(seen).toEqual(
      bodies
        .slice(1, 5)
        .map((b) => b.settlementId)
        .reverse(),
    );
    const since = await app.query(PAGE, { from: range.to });
    expect(since.data!.collectionNotifications.nodes.map((n: { settlementId: string }) => n.settlementId)).toEqual([
      bodies[5]!.settlementId,
    ]);
    const ofAccount = await app.query(PAGE, { ...range, account: '2233445566' });
    expect(ofAccount.data!.collectionNotifications.nodes.map((n: { transactionTime: string }) => n.transactionTime)).toEqual([
      '2026-11-22T09:40:00+01:00',
      '2026-11-22T09:00:00+01:00',
    ]);
  });
});

/** A store that counts the summaries asked of it, so a test sees that bad input reached none. */
async function countingStore() {
  const store = await openMemoryStore();
  let summaries = 0;
  const counted = withMethod(store, 'summarize', (query) => {
    summaries += 1;
    return store.summarize(query);
  });
  return { store: counted, summaries: () => summaries };
}

describe('collectionSummary: bad input, price and cache hints', () => {
  it.each([
    ['`to` equal to `from`', { from: '2026-11-22T09:00:00+01:00', to: '2026-11-22T08:00:00Z' }, 'to', /after `from`/],
    ['`to` before `from`', { from: '2026-11-22T09:00:00+01:00', to: '2026-11-21T09:00:00+01:00' }, 'to', /after `from`/],
    ['a range over 366 days', { from: '2025-01-01T00:00:00+01:00', to: '2026-01-02T00:00:00.001+01:00' }, 'to', /366 days/],
    ['a day that does not exist', { from: '2026-02-30T00:00:00+01:00', to: '2026-03-02T00:00:00+01:00' }, 'from', /real date/],
    [
      'an account number that is not 10 digits',
      { account: '123', from: '2026-11-22T00:00:00+01:00', to: '2026-11-23T00:00:00+01:00' },
      'accountNumber',
      /10-digit/,
    ],
  ])('refuses %s with BAD_USER_INPUT naming it, before any store query', async (_name, variables, argumentName, message) => {
    const { store, summaries } = await countingStore();
    const app = await startApp({}, { store });
    const { data, errors } = await app.query(SUMMARY, variables);
    expect(data).toEqual({ collectionSummary: null });
    expect(errors).toHaveLength(1);
    expect(errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argumentName });
    expect(errors![0]!.message).toMatch(message);
    expect(summaries()).toBe(0);
  });

  it('takes a range of exactly 366 days; on collectionNotifications refuses `to` not after `from`, too far, or alone', async () => {
    const app = await startApp();
    const year = await app.query(SUMMARY, { from: '2024-01-01T00:00:00+01:00', to: '2025-01-01T00:00:00+01:00' });
    expect(year.errors).toBeUndefined();
    expect(year.data!.collectionSummary.days).toHaveLength(366);
    const page = await app.query(PAGE, { from: '2026-11-22T09:00:00+01:00', to: '2026-11-22T09:00:00+01:00' });
    expect(page.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argumentName: 'to' });
    const long = await app.query(PAGE, { from: '2025-01-01T00:00:00+01:00', to: '2026-01-02T00:00:00.001+01:00' });
    expect(long.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argumentName: 'to' });
    const before = await app.query(PAGE, { to: '2026-11-22T09:00:00+01:00' });
    expect(before.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argumentName: 'from' });
  });

  it('costs the budget one unit for every 16 days, not a bank call per day', async () => {
    const app = await startApp({ MAX_OPERATION_COST: '3' });
    const summary = (alias: string, days: number) =>
      `${alias}: collectionSummary(from: "2026-11-01T00:00:00+01:00", to: "2026-11-${String(1 + days).padStart(2, '0')}T00:00:00+01:00") { count days { date } }`;
    // A name enquiry (1) and a fortnight (1) and a day (1).
    const { errors, data } = await app.query(
      `{ account(accountNumber: "0123456789") { accountName } ${summary('a', 14)} ${summary('b', 1)} }`,
    );
    expect(errors).toBeUndefined();
    expect(data!.a.days).toHaveLength(14);
    // Four weeks touch 29 days: two units, one more than is left.
    const refused = await app.query(`{ account(accountNumber: "0123456789") { accountName } ${summary('a', 28)} ${summary('b', 1)} }`);
    expect(refused.errors![0]!.extensions).toEqual({ code: 'COST_ESTIMATED_TOO_EXPENSIVE', cost: { estimated: 4, max: 3 } });
  });

  it('answers no-store: summaries are personal', async () => {
    const app = await startApp();
    const response = await fetch(app.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: '{ collectionSummary(from: "2026-11-22T00:00:00+01:00", to: "2026-11-23T00:00:00+01:00") { count days { count } } }',
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});

describe("the README's summary query", () => {
  /** `npm run simulate:transfer -- <args>` against `app`: the settlementIds it printed. */
  async function simulate(app: TestApp, ...args: string[]): Promise<string[]> {
    const script = join(import.meta.dirname, '..', 'scripts', 'simulate-transfer.ts');
    const { stdout } = await promisify(execFile)(process.execPath, [script, '--url', app.baseUrl, ...args], {
      env: { PATH: process.env.PATH },
    });
    return [...stdout.matchAll(/^#\d+ (\S+) /gm)].map((match) => match[1]!);
  }

  it('runs as printed, this month put in, and counts what the bank stands behind: not a --forged nor a --tampered transfer', async () => {
    const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const printed = /```graphql\n(query ThisMonth[\s\S]*?)```/.exec(readme)?.[1];
    expect(printed).toMatch(/confirmed: true\)/);
    const app = await startApp();
    const [genuine] = await simulate(app);
    const [forged] = await simulate(app, '--forged');
    const [tampered] = await simulate(app, '--tampered');
    await confirmationOf(app, genuine, 'CONFIRMED');
    await confirmationOf(app, forged, 'NOT_AT_BANK');
    await confirmationOf(app, tampered, 'MISMATCHED');

    // The month the transfers were made in, in the bank's zone, as the README asks (a minute either
    // side, should the test run at midnight on a month's last day).
    const now = DateTime.now().setZone('Africa/Lagos');
    const from = now.minus({ minutes: 1 }).startOf('month');
    const to = now.plus({ minutes: 1 }).startOf('month').plus({ months: 1 });
    const query = printed!.replace(/from: "[^"]+"/, `from: "${from.toISO()}"`).replace(/to: "[^"]+"/, `to: "${to.toISO()}"`);
    const { data, errors } = await app.query(query);
    expect(errors).toBeUndefined();
    const totals = { count: 1, refutedCount: 2, transactionAmount: '1500.00' };
    expect(data!.collectionSummary).toMatchObject(totals);
    expect(data!.collectionSummary.days.filter((day: { count: number }) => day.count > 0)).toEqual([
      expect.objectContaining({ ...totals, date: now.toISODate() }),
    ]);
    // Without `confirmed`, the same: the genuine one is confirmed, and refuted money is never counted.
    const unconfirmed = await app.query(query.replace(', confirmed: true', ''));
    expect(unconfirmed.data!.collectionSummary).toMatchObject(totals);
  });
});
