import { describe, expect, it } from 'vitest';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import { storeBackends, untilSettled } from '../../test/helpers/stores.ts';
import { START_OF_LOG } from '../domain/index.ts';
import type { InsertResult } from './types.ts';

const WAT = 'Africa/Lagos';
const [A, B, C] = ['0000000001', '0000000002', '0000000003'];

// A caller's accounts are a filter of the database's own: pages stay full and totals exact, however
// many rows of other accounts lie between theirs.
describe.each(storeBackends)('NotificationStore reads limited to accounts on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;

  /** A store holding, in order, notifications of A, C, B, C, A, C, B (a day apart, from 1 May). */
  async function filledStore() {
    const store = await (await backend.create()).open();
    const accounts = [A, C, B, C, A, C, B];
    const stored = accounts.map((accountNumber, day) =>
      notification({ accountNumber, transactionAmount: `${day + 1}.00`, transactionTime: `2024-05-0${day + 1}T12:00:00.000+01:00` }),
    );
    const results: InsertResult[] = [];
    for (const n of stored) results.push(await store.insert(n));
    await untilSettled(store, results);
    return { store, ids: (...indexes: number[]) => indexes.map((i) => stored[i]!.settlementId) };
  }
  const idsOf = (rows: { settlementId: string }[]) => rows.map((row) => row.settlementId);

  test('pages newest first over the given accounts only, full pages, with and without a time range', async () => {
    const { store, ids } = await filledStore();
    const accounts = [A, B];
    expect(idsOf(await store.listNewestFirst({ accounts, limit: 3 }))).toEqual(ids(6, 4, 2));
    const [, , third] = await store.listNewestFirst({ accounts, limit: 3 });
    expect(idsOf(await store.listNewestFirst({ accounts, before: third!.position, limit: 3 }))).toEqual(ids(0));
    const from = new Date('2024-05-02T00:00:00+01:00');
    const to = new Date('2024-05-06T00:00:00+01:00');
    expect(idsOf(await store.listNewestFirst({ accounts, from, to, limit: 10 }))).toEqual(ids(4, 2));
    expect(idsOf(await store.listNewestFirst({ accounts, from, limit: 10 }))).toEqual(ids(6, 4, 2));
  });

  test('replays oldest first over the given accounts only', async () => {
    const { store, ids } = await filledStore();
    expect(idsOf(await store.listAfter({ accounts: [B, A], after: START_OF_LOG, limit: 10 }))).toEqual(ids(0, 2, 4, 6));
    expect(idsOf(await store.listAfter({ accounts: [C], after: START_OF_LOG, limit: 2 }))).toEqual(ids(1, 3));
  });

  test('totals the given accounts only, day by day', async () => {
    const { store } = await filledStore();
    const range = { from: new Date('2024-05-01T00:00:00+01:00'), to: new Date('2024-05-08T00:00:00+01:00'), timezone: WAT };
    const summary = await store.summarize({ ...range, accounts: [A, B] });
    expect(summary).toMatchObject({ count: 4, transactionAmount: '16.00' });
    expect(summary.days.map((day) => day.count)).toEqual([1, 0, 1, 0, 1, 0, 1]);
    expect(await store.summarize({ ...range, accounts: [C] })).toMatchObject({ count: 3, transactionAmount: '12.00' });
  });

  test('reads nothing for no account, and nothing for an account outside the given ones', async () => {
    const { store } = await filledStore();
    const range = { from: new Date('2024-05-01T00:00:00+01:00'), to: new Date('2024-05-08T00:00:00+01:00'), timezone: WAT };
    expect(await store.listNewestFirst({ accounts: [], limit: 10 })).toEqual([]);
    expect(await store.listAfter({ accounts: [], after: START_OF_LOG, limit: 10 })).toEqual([]);
    expect(await store.summarize({ ...range, accounts: [] })).toMatchObject({ count: 0, transactionAmount: '0.00' });
    expect(await store.listNewestFirst({ accountNumber: C, accounts: [A, B], limit: 10 })).toEqual([]);
    expect((await store.listNewestFirst({ accountNumber: A, accounts: [A, B], limit: 10 })).length).toBe(2);
  });
});
