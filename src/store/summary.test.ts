import { describe, expect, it } from 'vitest';
import { AWKWARD_AMOUNTS, BEYOND_KOBO_AMOUNTS, referenceTotals } from '../../test/helpers/amounts.ts';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import { storeBackends, untilSettled } from '../../test/helpers/stores.ts';
import { PENDING, type ConfirmationStatus, type LogPosition, type NewCollectionNotification } from '../domain/index.ts';

const WAT = 'Africa/Lagos';
const at = (iso: string) => new Date(iso);

/** A confirmation with `status`, as the confirmer or an import records it. */
const confirmation = (status: ConfirmationStatus) => ({
  ...PENDING,
  status,
  checkedAt: status === 'PENDING' || status === 'UNCHECKED' ? null : '2024-05-03T09:00:00.000Z',
  acknowledgedByBank: status === 'CONFIRMED' ? true : null,
});

describe.each(storeBackends)('NotificationStore.summarize on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;

  async function openStore() {
    return (await backend.create()).open();
  }

  test('sums hundreds of awkward amounts exactly, as a BigInt sum does, past 2^53 kobo and beyond kobo', async () => {
    const store = await openStore();
    const amounts = [...AWKWARD_AMOUNTS, ...BEYOND_KOBO_AMOUNTS];
    const stored = Array.from({ length: 420 }, (_, i) =>
      notification({
        transactionAmount: amounts[i % amounts.length]!,
        settledAmount: i % 3 === 0 ? null : amounts[(i + 1) % amounts.length]!,
        feeAmount: i % 2 === 0 ? '0.10' : '0.20',
        vatAmount: i % 7 === 0 ? '0.0075' : '0.75',
        // Three days of WAT, an hour apart from 06:00.
        transactionTime: `2024-05-0${1 + (i % 3)}T${String(6 + (i % 12)).padStart(2, '0')}:00:00.000+01:00`,
      }),
    );
    await Promise.all(stored.map((n) => store.insert(n)));

    const summary = await store.summarize({ from: at('2024-05-01T00:00:00+01:00'), to: at('2024-05-04T00:00:00+01:00'), timezone: WAT });
    expect(summary).toMatchObject(referenceTotals(stored));
    expect(summary.days.map((day) => day.date)).toEqual(['2024-05-01', '2024-05-02', '2024-05-03']);
    summary.days.forEach((day, index) => {
      expect(day).toMatchObject(referenceTotals(stored.filter((_, i) => i % 3 === index)));
    });
  });

  test('cuts days at midnight WAT: 00:30 WAT belongs to its own day though UTC still has the day before', async () => {
    const store = await openStore();
    const lateOnFirst = notification({ transactionTime: '2024-05-01T23:59:59.999+01:00', transactionAmount: '1.00' });
    const midnight = notification({ transactionTime: '2024-05-02T00:00:00+01:00', transactionAmount: '2.00' });
    const halfPast = notification({ transactionTime: '2024-05-02T00:30:00.000+01:00', transactionAmount: '4.00' });
    // The bank's time was unreadable: its receivedAt, 23:45 UTC, is 00:45 WAT on the 2nd.
    const received = notification({ transactionTime: null, receivedAt: '2024-05-01T23:45:00.000Z', transactionAmount: '8.00' });
    for (const n of [lateOnFirst, midnight, halfPast, received]) await store.insert(n);

    const summary = await store.summarize({ from: at('2024-05-01T00:00:00+01:00'), to: at('2024-05-03T00:00:00+01:00'), timezone: WAT });
    expect(summary.days).toEqual([
      { date: '2024-05-01', from: '2024-05-01T00:00:00.000+01:00', to: '2024-05-02T00:00:00.000+01:00', ...referenceTotals([lateOnFirst]) },
      {
        date: '2024-05-02',
        from: '2024-05-02T00:00:00.000+01:00',
        to: '2024-05-03T00:00:00.000+01:00',
        ...referenceTotals([midnight, halfPast, received]),
      },
    ]);
    expect(summary).toMatchObject({ count: 4, transactionAmount: '15.00' });

    // The same instants cut in UTC would put 00:30 WAT on the 1st.
    const utc = await store.summarize({ from: at('2024-05-01T00:00:00Z'), to: at('2024-05-02T00:00:00Z'), timezone: 'UTC' });
    expect(utc.days).toMatchObject([{ date: '2024-05-01', count: 4 }]);
  });

  test('counts [from, to): a notification at from is in, one at to is out', async () => {
    const store = await openStore();
    const atFrom = notification({ transactionTime: '2024-05-01T09:00:00+01:00', transactionAmount: '1.00' });
    const justBeforeTo = notification({ transactionTime: '2024-05-01T09:59:59.999+01:00', transactionAmount: '2.00' });
    const atTo = notification({ transactionTime: '2024-05-01T10:00:00.000+01:00', transactionAmount: '4.00' });
    const justBeforeFrom = notification({ transactionTime: '2024-05-01T07:59:59.999Z', transactionAmount: '8.00' });
    for (const n of [atFrom, justBeforeTo, atTo, justBeforeFrom]) await store.insert(n);

    // The same instants written with another offset.
    const summary = await store.summarize({ from: at('2024-05-01T08:00:00Z'), to: at('2024-05-01T10:00:00+01:00'), timezone: WAT });
    expect(summary).toMatchObject({ count: 2, transactionAmount: '3.00' });
    expect(summary.days).toEqual([
      {
        date: '2024-05-01',
        from: '2024-05-01T09:00:00.000+01:00',
        to: '2024-05-01T10:00:00.000+01:00',
        ...referenceTotals([atFrom, justBeforeTo]),
      },
    ]);
  });

  test('filters by account, and covers every account without one', async () => {
    const store = await openStore();
    const mine = [
      notification({ accountNumber: '1111111111', transactionAmount: '0.10' }),
      notification({ accountNumber: '1111111111', transactionAmount: '0.20' }),
    ];
    const theirs = notification({ accountNumber: '2222222222', transactionAmount: '1234567890123.45' });
    for (const n of [...mine, theirs]) await store.insert(n);
    const range = { from: at('2024-05-01T00:00:00+01:00'), to: at('2024-05-02T00:00:00+01:00'), timezone: WAT };

    expect(await store.summarize({ ...range, accountNumber: '1111111111' })).toMatchObject({ count: 2, transactionAmount: '0.30' });
    expect(await store.summarize({ ...range, accountNumber: '2222222222' })).toMatchObject(referenceTotals([theirs]));
    expect(await store.summarize(range)).toMatchObject(referenceTotals([...mine, theirs]));
    expect(await store.summarize({ ...range, accountNumber: '3333333333' })).toMatchObject({ count: 0, transactionAmount: '0.00' });
  });

  test('gives every day of the range, zero where nothing arrived, and null sums no notification carries', async () => {
    const store = await openStore();
    await store.insert(
      notification({ transactionTime: '2024-05-02T12:00:00+01:00', settledAmount: null, feeAmount: null, vatAmount: null }),
    );
    const summary = await store.summarize({ from: at('2024-05-01T12:00:00+01:00'), to: at('2024-05-03T12:00:00+01:00'), timezone: WAT });
    const empty = { count: 0, refutedCount: 0, transactionAmount: '0.00', settledAmount: null, feeAmount: null, vatAmount: null };
    expect(summary).toMatchObject({ count: 1, transactionAmount: '1500.00', settledAmount: null, feeAmount: null, vatAmount: null });
    expect(summary.days).toEqual([
      { date: '2024-05-01', from: '2024-05-01T12:00:00.000+01:00', to: '2024-05-02T00:00:00.000+01:00', ...empty },
      {
        ...empty,
        date: '2024-05-02',
        from: '2024-05-02T00:00:00.000+01:00',
        to: '2024-05-03T00:00:00.000+01:00',
        count: 1,
        transactionAmount: '1500.00',
      },
      { date: '2024-05-03', from: '2024-05-03T00:00:00.000+01:00', to: '2024-05-03T12:00:00.000+01:00', ...empty },
    ]);
  });

  test('pages listNewestFirst within [from, to), by account, keeping seq order and beforeSeq', async () => {
    const store = await openStore();
    const times = ['08:59:59.999', '09:00:00.000', '09:15:00.000', '09:30:00.000', '09:45:00.000', '10:00:00.000'];
    const stored: { position: LogPosition; time: string; accountNumber: string }[] = [];
    for (const [index, time] of times.entries()) {
      const accountNumber = index % 2 === 0 ? '1111111111' : '2222222222';
      const result = await store.insert(notification({ accountNumber, transactionTime: `2024-05-01T${time}+01:00` }));
      if (result.status === 'inserted') stored.push({ position: result.notification.position, time, accountNumber });
    }
    // Stored late: its bank time is in range though its seq is the newest.
    const late = await store.insert(notification({ accountNumber: '1111111111', transactionTime: '2024-05-01T09:05:00+01:00' }));
    const inRange = [
      ...stored.slice(1, 5).map((s) => s.position.seq),
      late.status === 'inserted' ? late.notification.position.seq : -1,
    ].reverse();
    await untilSettled(store, [late]);
    const range = { from: at('2024-05-01T09:00:00+01:00'), to: at('2024-05-01T10:00:00+01:00') };

    const first = await store.listNewestFirst({ ...range, limit: 2 });
    const rest = await store.listNewestFirst({ ...range, limit: 10, before: first.at(-1)!.position });
    expect([...first, ...rest].map((record) => record.position.seq)).toEqual(inRange);
    const ofAccount = await store.listNewestFirst({ ...range, accountNumber: '1111111111', limit: 10 });
    expect(ofAccount.map((record) => record.transactionTime)).toEqual([
      '2024-05-01T09:05:00+01:00',
      '2024-05-01T09:45:00.000+01:00',
      '2024-05-01T09:15:00.000+01:00',
    ]);
    // Either end may be open.
    expect(await store.listNewestFirst({ from: range.to, limit: 10 })).toHaveLength(1);
    expect(await store.listNewestFirst({ to: range.from, limit: 10 })).toHaveLength(1);
  });

  test('never counts what the bank refuted, says how many it left out per day, and with confirmed counts CONFIRMED alone', async () => {
    const store = await openStore();
    const day = (date: string, status: ConfirmationStatus, amounts: Partial<NewCollectionNotification>, accountNumber = '1111111111') =>
      notification({ transactionTime: `2024-05-0${date}T10:00:00+01:00`, confirmation: confirmation(status), accountNumber, ...amounts });
    const pending = day('1', 'PENDING', { transactionAmount: '1.00', settledAmount: '0.99' });
    const confirmed = day('1', 'CONFIRMED', { transactionAmount: '2.00', settledAmount: '1.99' });
    const unchecked = day('2', 'UNCHECKED', { transactionAmount: '4.00', settledAmount: null });
    // Forged and tampered, one beyond kobo (its sum comes from its text, not the kobo columns).
    const forged = day('1', 'NOT_AT_BANK', { transactionAmount: '1500.00' });
    const tampered = day('2', 'MISMATCHED', { transactionAmount: '91500.005', settledAmount: '91500.005', feeAmount: '0.0075' });
    const elsewhere = day('2', 'CONFIRMED', { transactionAmount: '8.00' }, '2222222222');
    for (const n of [pending, confirmed, unchecked, forged, tampered, elsewhere]) await store.insert(n);
    const range = { from: at('2024-05-01T00:00:00+01:00'), to: at('2024-05-03T00:00:00+01:00'), timezone: WAT };

    const mine = await store.summarize({ ...range, accountNumber: '1111111111' });
    expect(mine).toMatchObject(referenceTotals([pending, confirmed, unchecked], 2));
    expect(mine.days).toMatchObject([referenceTotals([pending, confirmed], 1), referenceTotals([unchecked], 1)]);
    const mineConfirmed = await store.summarize({ ...range, accountNumber: '1111111111', confirmed: true });
    expect(mineConfirmed).toMatchObject(referenceTotals([confirmed], 2));
    expect(mineConfirmed.days).toMatchObject([referenceTotals([confirmed], 1), { ...referenceTotals([], 1), settledAmount: null }]);
    // Every account, and several.
    expect(await store.summarize(range)).toMatchObject(referenceTotals([pending, confirmed, unchecked, elsewhere], 2));
    expect(await store.summarize({ ...range, confirmed: true })).toMatchObject(referenceTotals([confirmed, elsewhere], 2));
    const both = { ...range, accounts: ['1111111111', '2222222222'] };
    expect(await store.summarize({ ...both, confirmed: true })).toMatchObject(referenceTotals([confirmed, elsewhere], 2));

    // Confirmations arrive: the confirmed totals grow with them.
    const answer = { checkedAt: '2024-05-03T09:00:00.000Z', differences: [], acknowledgedByBank: true };
    expect(await store.confirmations.record([{ settlementId: pending.settlementId, status: 'CONFIRMED', ...answer }])).toEqual([true]);
    expect(await store.summarize({ ...range, accountNumber: '1111111111', confirmed: true })).toMatchObject(
      referenceTotals([pending, confirmed], 2),
    );
  });

  test('lists by confirmation status, outside a range, since `from` and within [from, to), paging by position', async () => {
    const store = await openStore();
    const statuses: ConfirmationStatus[] = ['UNCHECKED', 'CONFIRMED', 'PENDING', 'NOT_AT_BANK', 'CONFIRMED', 'MISMATCHED', 'CONFIRMED'];
    const stored = statuses.map((status, i) =>
      notification({
        accountNumber: i % 2 === 0 ? '1111111111' : '2222222222',
        transactionTime: `2024-05-01T${String(9 + i).padStart(2, '0')}:00:00+01:00`,
        confirmation: confirmation(status),
      }),
    );
    // The oldest of all is the one UNCHECKED: many of another status stand between it and the newest.
    const newer = Array.from({ length: 30 }, () =>
      notification({ transactionTime: '2024-05-02T09:00:00+01:00', confirmation: confirmation('CONFIRMED') }),
    );
    const results = [];
    for (const n of [...stored, ...newer]) results.push(await store.insert(n));
    await untilSettled(store, results);
    const ids = (records: { settlementId: string }[]) => records.map((record) => record.settlementId);
    const having = (...wanted: ConfirmationStatus[]) =>
      stored
        .filter((_, i) => wanted.includes(statuses[i]!))
        .map((n) => n.settlementId)
        .reverse();

    expect(ids(await store.listNewestFirst({ confirmation: ['UNCHECKED'], limit: 5 }))).toEqual(having('UNCHECKED'));
    const refuted = await store.listNewestFirst({ confirmation: ['MISMATCHED', 'NOT_AT_BANK', 'MISMATCHED'], limit: 1 });
    expect(ids(refuted)).toEqual(having('MISMATCHED'));
    const rest = await store.listNewestFirst({ confirmation: ['MISMATCHED', 'NOT_AT_BANK'], limit: 5, before: refuted[0]!.position });
    expect(ids(rest)).toEqual(having('NOT_AT_BANK'));
    expect(rest.map((record) => record.confirmation.status)).toEqual(['NOT_AT_BANK']);
    // By account, one and several; since `from`; within [from, to).
    expect(ids(await store.listNewestFirst({ confirmation: ['CONFIRMED', 'PENDING'], accountNumber: '1111111111', limit: 5 }))).toEqual([
      stored[6]!.settlementId,
      stored[4]!.settlementId,
      stored[2]!.settlementId,
    ]);
    const several = await store.listNewestFirst({
      confirmation: ['NOT_AT_BANK', 'UNCHECKED'],
      accounts: ['1111111111', '2222222222'],
      limit: 5,
    });
    expect(ids(several)).toEqual(having('NOT_AT_BANK', 'UNCHECKED'));
    const since = { from: at('2024-05-01T12:00:00+01:00') };
    expect(ids(await store.listNewestFirst({ ...since, confirmation: ['CONFIRMED', 'MISMATCHED'], limit: 3 }))).toEqual(
      ids(newer.slice(-3).reverse()),
    );
    expect(ids(await store.listNewestFirst({ ...since, confirmation: ['MISMATCHED', 'NOT_AT_BANK'], limit: 5 }))).toEqual(
      having('MISMATCHED', 'NOT_AT_BANK'),
    );
    const range = { from: at('2024-05-01T09:00:00+01:00'), to: at('2024-05-02T00:00:00+01:00') };
    expect(ids(await store.listNewestFirst({ ...range, confirmation: ['CONFIRMED'], limit: 5 }))).toEqual(having('CONFIRMED'));
    const first = await store.listNewestFirst({
      ...range,
      confirmation: ['CONFIRMED', 'UNCHECKED'],
      accountNumber: '1111111111',
      limit: 1,
    });
    const next = await store.listNewestFirst({
      ...range,
      confirmation: ['CONFIRMED', 'UNCHECKED'],
      accountNumber: '1111111111',
      limit: 5,
      before: first[0]!.position,
    });
    expect(ids([...first, ...next])).toEqual([stored[6]!, stored[4]!, stored[0]!].map((n) => n.settlementId));
    // None asked: nothing; every one asked: everything.
    expect(await store.listNewestFirst({ confirmation: [], limit: 5 })).toEqual([]);
    const every = await store.listNewestFirst({
      confirmation: ['PENDING', 'CONFIRMED', 'MISMATCHED', 'NOT_AT_BANK', 'UNCHECKED'],
      limit: 40,
    });
    expect(ids(every)).toEqual(ids(await store.listNewestFirst({ limit: 40 })));
    expect(every).toHaveLength(stored.length + newer.length);
  });
});
