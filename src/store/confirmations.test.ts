import { describe, expect, it } from 'vitest';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import { postgresSession, storeBackends, untilSettled, type UrlTestDatabase } from '../../test/helpers/stores.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import {
  NOTHING_ASKED,
  PENDING,
  START_OF_LOG,
  UNCHECKED,
  type ConfirmationOutcome,
  type ConfirmationRetry,
  type LogPosition,
} from '../domain/index.ts';
import { loadMigrations } from './migrations.ts';
import type { CollectionStore, InsertResult } from './types.ts';

const pending = (overrides = {}) => notification({ confirmation: PENDING, ...overrides });

function positionOf(result: InsertResult): LogPosition {
  if (result.status !== 'inserted') throw new Error('not inserted');
  return result.notification.position;
}

const outcome = (settlementId: string, overrides: Partial<ConfirmationOutcome> = {}): ConfirmationOutcome => ({
  settlementId,
  status: 'CONFIRMED',
  checkedAt: '2026-11-22T13:05:10.000Z',
  differences: [],
  acknowledgedByBank: true,
  ...overrides,
});

/** Inserts `notifications` one after another and waits until the log lists them all. */
async function stored(store: CollectionStore, ...notifications: ReturnType<typeof notification>[]): Promise<LogPosition[]> {
  const results = [];
  for (const one of notifications) results.push(await store.insert(one));
  await untilSettled(store, results);
  return results.map(positionOf);
}

const retry = (settlementId: string, overrides: Partial<ConfirmationRetry> = {}): ConfirmationRetry => ({
  settlementId,
  delayMs: 0,
  kind: 'failed',
  at: '2026-11-22T13:05:10.000Z',
  ...overrides,
});

/** The settlementIds of the settled log of confirmations, oldest first, once it lists at least `count`. */
async function confirmedIds(store: CollectionStore, count: number, query: { accountNumber?: string; accounts?: string[] } = {}) {
  return waitFor(async () => {
    const listed = await store.confirmationLog.listAfter({ after: START_OF_LOG, limit: 100, ...query });
    return listed.length >= count ? listed.map((record) => record.settlementId) : undefined;
  });
}

describe.each(storeBackends)('the confirmation queue on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;
  const testShared = backend.enabled && backend.shared ? it : it.skip;
  // Where replicas of several releases write side by side and commit in any order.
  const testPostgres = backend.enabled && backend.name === 'PostgreSQL' ? it : it.skip;

  async function setup() {
    const database = await backend.create();
    return { database, store: await database.open() };
  }

  test('stores a delivery PENDING when told to, and reads back its source and confirmation', async () => {
    const { store } = await setup();
    const one = pending();
    const result = await store.insert(one);
    expect(result).toMatchObject({ status: 'inserted', notification: { source: 'WEBHOOK', confirmation: PENDING } });
    await untilSettled(store, [result]);
    const [read] = await store.getMany([one.settlementId]);
    expect(read).toMatchObject({
      source: 'WEBHOOK',
      confirmation: { status: 'PENDING', checkedAt: null, differences: [], acknowledgedByBank: null },
    });
    expect((await store.listAfter({ after: START_OF_LOG, limit: 5 }))[0]?.confirmation.status).toBe('PENDING');
  });

  test('claims the oldest due PENDING notifications first, up to the limit, and none that is not PENDING', async () => {
    const { store } = await setup();
    const [a, b, c] = [pending(), pending(), pending()];
    await stored(store, notification(), a, notification({ confirmation: UNCHECKED }), b, c);
    const first = await store.confirmations.claim({ limit: 2, leaseMs: 60_000 });
    expect(first.map((record) => record.settlementId)).toEqual([a.settlementId, b.settlementId]);
    expect(first[0]).toMatchObject({ ...a, confirmation: PENDING, source: 'WEBHOOK' });
    expect((await store.confirmations.claim({ limit: 5, leaseMs: 60_000 })).map((record) => record.settlementId)).toEqual([c.settlementId]);
    expect(await store.confirmations.claim({ limit: 5, leaseMs: 60_000 })).toEqual([]);
    expect(await store.confirmations.countPending()).toBe(3);
    expect(await store.confirmations.oldestPending()).toBe(a.receivedAt);
  });

  test('gives a claimed notification to no other claim until its lease ends, then claims it again', async () => {
    const { database, store } = await setup();
    const one = pending();
    await stored(store, one);
    expect(await store.confirmations.claim({ limit: 1, leaseMs: 300 })).toHaveLength(1);
    expect(await store.confirmations.claim({ limit: 1, leaseMs: 300 })).toEqual([]);
    // The replica that claimed it died: once the lease is over, any claim takes it up.
    const again = await waitFor(async () => {
      const claimed = await store.confirmations.claim({ limit: 1, leaseMs: 60_000 });
      return claimed.length > 0 ? claimed : undefined;
    });
    expect(again.map((record) => record.settlementId)).toEqual([one.settlementId]);
    // A claim is not an ask: nothing was asked of the bank yet.
    expect(await database.query('SELECT confirmation_attempts AS n FROM collection_notifications')).toEqual([{ n: 0 }]);
  });

  test('defers a claimed notification by the delay given, and gives it back at once with none', async () => {
    const { store } = await setup();
    const one = pending();
    await stored(store, one);
    await store.confirmations.claim({ limit: 1, leaseMs: 60_000 });
    await store.confirmations.defer([one.settlementId], 60_000);
    expect(await store.confirmations.claim({ limit: 1, leaseMs: 60_000 })).toEqual([]);
    await store.confirmations.defer([one.settlementId], 0);
    expect((await store.confirmations.claim({ limit: 1, leaseMs: 60_000 })).map((record) => record.settlementId)).toEqual([
      one.settlementId,
    ]);
  });

  test('records an outcome once, over a PENDING notification only, and never changes a decided one', async () => {
    const { store } = await setup();
    const [a, b, unchecked] = [pending(), pending(), notification()];
    await stored(store, a, b, unchecked);
    const mismatch = outcome(b.settlementId, {
      status: 'MISMATCHED',
      differences: ['transactionAmount', 'currency'],
      acknowledgedByBank: false,
    });
    expect(
      await store.confirmations.record([outcome(a.settlementId), mismatch, outcome(unchecked.settlementId), outcome('unknown')]),
    ).toEqual([true, true, false, false]);
    expect(await store.confirmations.record([outcome(a.settlementId, { status: 'NOT_AT_BANK', acknowledgedByBank: null })])).toEqual([
      false,
    ]);
    const [readA, readB, readUnchecked] = await store.getMany([a.settlementId, b.settlementId, unchecked.settlementId]);
    expect(readA!.confirmation).toEqual({
      ...NOTHING_ASKED,
      status: 'CONFIRMED',
      checkedAt: '2026-11-22T13:05:10.000Z',
      differences: [],
      acknowledgedByBank: true,
      attempts: 1,
    });
    expect(readB!.confirmation).toEqual({
      ...NOTHING_ASKED,
      status: 'MISMATCHED',
      checkedAt: '2026-11-22T13:05:10.000Z',
      differences: ['transactionAmount', 'currency'],
      acknowledgedByBank: false,
      attempts: 1,
    });
    expect(readUnchecked!.confirmation).toEqual({ ...UNCHECKED, ...NOTHING_ASKED });
    expect(await store.confirmations.countPending()).toBe(0);
    expect(await store.confirmations.oldestPending()).toBeNull();
    expect(await store.confirmations.claim({ limit: 5, leaseMs: 60_000 })).toEqual([]);
    await expect(store.confirmations.record([outcome(a.settlementId, { status: 'PENDING' as never })])).rejects.toThrow(RangeError);
    expect(await store.confirmations.record([])).toEqual([]);
  });

  test('records an operator RECHECK over NOT_AT_BANK, MISMATCHED or UNCHECKED, never over CONFIRMED', async () => {
    const { store } = await setup();
    const [gone, differs, unchecked, confirmed] = [pending(), pending(), notification(), pending()];
    await stored(store, gone, differs, unchecked, confirmed);
    await store.confirmations.record([
      outcome(gone.settlementId, { status: 'NOT_AT_BANK', acknowledgedByBank: null }),
      outcome(differs.settlementId, { status: 'MISMATCHED', differences: ['feeAmount'] }),
      outcome(confirmed.settlementId),
    ]);
    const again = [gone, differs, unchecked, confirmed].map((one) => outcome(one.settlementId, { checkedAt: '2026-11-23T08:00:00.000Z' }));
    expect(await store.confirmations.record(again)).toEqual([false, false, false, false]);
    expect(await store.confirmations.record(again, { overDecided: true })).toEqual([true, true, true, false]);
    const read = await store.getMany([gone.settlementId, differs.settlementId, unchecked.settlementId, confirmed.settlementId]);
    expect(read.map((one) => [one!.confirmation.status, one!.confirmation.checkedAt, one!.confirmation.attempts])).toEqual([
      ['CONFIRMED', '2026-11-23T08:00:00.000Z', 2],
      ['CONFIRMED', '2026-11-23T08:00:00.000Z', 2],
      ['CONFIRMED', '2026-11-23T08:00:00.000Z', 1],
      ['CONFIRMED', '2026-11-22T13:05:10.000Z', 1],
    ]);
  });

  test('counts asks that decided nothing: a failure towards its backoff, the first not-found answer kept', async () => {
    const { store } = await setup();
    const [failing, unknown, decided] = [pending(), pending(), pending()];
    await stored(store, failing, unknown, decided);
    await store.confirmations.record([outcome(decided.settlementId)]);
    expect(
      await store.confirmations.retry([
        retry(failing.settlementId),
        retry(unknown.settlementId, { kind: 'not-found', at: '2026-11-22T13:00:00.000Z' }),
        retry(decided.settlementId),
      ]),
    ).toEqual([true, true, false]);
    await store.confirmations.retry([
      retry(failing.settlementId, { delayMs: 60_000 }),
      retry(unknown.settlementId, { kind: 'not-found', at: '2026-11-22T13:00:30.000Z' }),
    ]);
    const [readFailing, readUnknown] = await store.getMany([failing.settlementId, unknown.settlementId]);
    expect(readFailing!.confirmation).toMatchObject({ status: 'PENDING', attempts: 2, failedAsks: 2, notFoundAt: null });
    expect(readUnknown!.confirmation).toMatchObject({
      status: 'PENDING',
      attempts: 2,
      failedAsks: 0,
      notFoundAt: '2026-11-22T13:00:00.000Z',
    });
    // Due again after its delay: the failing one in a minute, the other at once.
    expect((await store.confirmations.claim({ limit: 5, leaseMs: 60_000 })).map((one) => one.settlementId)).toEqual([unknown.settlementId]);
    // An answer clears the failures; a failure after a not-found answer keeps its time.
    await store.confirmations.retry([retry(unknown.settlementId)]);
    expect((await store.getMany([unknown.settlementId]))[0]!.confirmation).toMatchObject({
      failedAsks: 1,
      notFoundAt: '2026-11-22T13:00:00.000Z',
    });
    await expect(store.confirmations.retry([retry(failing.settlementId, { delayMs: -1 })])).rejects.toThrow(RangeError);
  });

  test('reopens a MISMATCHED or UNCHECKED notification the bank now says it does not know, and never a CONFIRMED or NOT_AT_BANK one', async () => {
    const { store } = await setup();
    const [differs, unchecked, gone, confirmed] = [pending(), notification(), pending(), pending()];
    await stored(store, differs, unchecked, gone, confirmed);
    await store.confirmations.record([
      outcome(differs.settlementId, { status: 'MISMATCHED', differences: ['feeAmount'] }),
      outcome(gone.settlementId, { status: 'NOT_AT_BANK', acknowledgedByBank: null }),
      outcome(confirmed.settlementId),
    ]);
    const reopen = (id: string) => retry(id, { kind: 'not-found', reopen: true, at: '2026-11-23T08:00:00.000Z', delayMs: 30_000 });
    expect(await store.confirmations.retry([differs, unchecked, gone, confirmed].map((one) => reopen(one.settlementId)))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    const read = await store.getMany([differs.settlementId, unchecked.settlementId, gone.settlementId, confirmed.settlementId]);
    expect(read.map((one) => [one!.confirmation.status, one!.confirmation.notFoundAt])).toEqual([
      ['PENDING', '2026-11-23T08:00:00.000Z'],
      ['PENDING', '2026-11-23T08:00:00.000Z'],
      ['NOT_AT_BANK', null],
      ['CONFIRMED', null],
    ]);
    expect(await store.confirmations.countPending()).toBe(2);
  });

  test('claims only notifications no ask has failed about for a probe', async () => {
    const { store } = await setup();
    const [refused, fresh] = [pending(), pending()];
    await stored(store, refused, fresh);
    await store.confirmations.retry([retry(refused.settlementId)]);
    expect((await store.confirmations.claim({ limit: 5, leaseMs: 60_000, probe: true })).map((one) => one.settlementId)).toEqual([
      fresh.settlementId,
    ]);
    expect((await store.confirmations.claim({ limit: 5, leaseMs: 60_000 })).map((one) => one.settlementId)).toEqual([refused.settlementId]);
  });

  test("records an operator's decision over a PENDING notification only, with who decided and why", async () => {
    const { store } = await setup();
    const [stuck, forged, decided] = [pending(), pending(), pending()];
    await stored(store, stuck, forged, decided);
    await store.confirmations.record([outcome(decided.settlementId, { status: 'MISMATCHED', differences: ['vatAmount'] })]);
    const decision = (settlementId: string, status: 'CONFIRMED' | 'NOT_AT_BANK') => ({
      settlementId,
      status,
      decidedBy: 'ops-ada',
      reason: 'on the bank statement of 22 November',
      decidedAt: '2026-11-23T09:00:00.000Z',
    });
    const result = await store.confirmations.decide(decision(stuck.settlementId, 'CONFIRMED'));
    expect(result).toMatchObject({
      status: 'decided',
      notification: {
        settlementId: stuck.settlementId,
        confirmation: {
          status: 'CONFIRMED',
          checkedAt: '2026-11-23T09:00:00.000Z',
          differences: [],
          acknowledgedByBank: null,
          decidedBy: 'ops-ada',
          reason: 'on the bank statement of 22 November',
        },
      },
    });
    expect(await store.confirmations.decide(decision(forged.settlementId, 'NOT_AT_BANK'))).toMatchObject({ status: 'decided' });
    expect(await store.confirmations.decide(decision(stuck.settlementId, 'NOT_AT_BANK'))).toEqual({
      status: 'refused',
      current: 'CONFIRMED',
    });
    expect(await store.confirmations.decide(decision(decided.settlementId, 'CONFIRMED'))).toEqual({
      status: 'refused',
      current: 'MISMATCHED',
    });
    expect(await store.confirmations.decide(decision('never-stored', 'CONFIRMED'))).toEqual({ status: 'unknown' });
    const read = await store.getMany([stuck.settlementId, forged.settlementId, decided.settlementId]);
    expect(read.map((one) => one!.confirmation.status)).toEqual(['CONFIRMED', 'NOT_AT_BANK', 'MISMATCHED']);
    expect(await confirmedIds(store, 1)).toEqual([stuck.settlementId]);
    expect(await store.confirmations.countPending()).toBe(0);
  });

  test('logs each confirmation once, in the order confirmations were recorded, whatever confirmed it', async () => {
    const { store } = await setup();
    const [a, b, c, d] = [
      pending({ accountNumber: '1111111111' }),
      pending(),
      pending({ accountNumber: '1111111111' }),
      pending({ accountNumber: '1111111111' }),
    ];
    await stored(store, a, b, c, d);
    expect(await store.confirmationLog.settledHead()).toEqual(START_OF_LOG);
    // The last stored first: the log follows confirmations, not the store's order.
    await store.confirmations.record([outcome(d.settlementId)]);
    await store.confirmations.record([outcome(c.settlementId, { status: 'MISMATCHED', differences: ['vatAmount'] })]);
    await store.confirmations.record([outcome(b.settlementId), outcome(a.settlementId)]);
    // An import stores a notification already CONFIRMED: it joins the log as it is stored.
    const imported = notification({ confirmation: { ...PENDING, status: 'CONFIRMED', checkedAt: '2026-11-22T13:06:00.000Z' } });
    await stored(store, imported);
    const ids = await confirmedIds(store, 4);
    expect(ids.slice(0, 1)).toEqual([d.settlementId]);
    expect(ids.slice(1, 3).sort()).toEqual([a.settlementId, b.settlementId].sort());
    expect(ids[3]).toBe(imported.settlementId);
    const listed = await store.confirmationLog.listAfter({ after: START_OF_LOG, limit: 10 });
    expect(listed[0]).toMatchObject({ ...d, confirmation: { status: 'CONFIRMED' } });
    // Positions of the log of confirmations: after one, only those confirmed later; through one, none past it.
    const [first, second] = listed;
    expect((await store.confirmationLog.listAfter({ after: first!.confirmedAt, limit: 10 })).map((one) => one.settlementId)).toEqual(
      ids.slice(1),
    );
    expect((await store.confirmationLog.listAfter({ after: START_OF_LOG, through: second!.confirmedAt, limit: 10 })).length).toBe(2);
    expect(await confirmedIds(store, 2, { accountNumber: '1111111111' })).toEqual(
      ids.filter((id) => id === d.settlementId || id === a.settlementId),
    );
    expect(await store.confirmationLog.listAfter({ after: START_OF_LOG, accounts: [], limit: 10 })).toEqual([]);
    expect(await store.confirmationLog.settledHead()).toEqual(listed.at(-1)!.confirmedAt);
    // Recorded again (another replica's late answer, or an operator's RECHECK), a CONFIRMED one is not logged twice.
    await store.confirmations.record([outcome(d.settlementId)], { overDecided: true });
    expect((await store.confirmationLog.listAfter({ after: START_OF_LOG, limit: 10 })).length).toBe(4);
  });

  testShared('lets two stores on one database claim side by side, each notification once', async () => {
    const { database, store } = await setup();
    const other = await database.open();
    const notifications = Array.from({ length: 40 }, () => pending());
    await Promise.all(notifications.map((one) => store.insert(one)));
    const claimedBy = async (claimer: CollectionStore) => {
      const ids: string[] = [];
      for (;;) {
        const claimed = await claimer.confirmations.claim({ limit: 3, leaseMs: 60_000 });
        if (claimed.length === 0) return ids;
        ids.push(...claimed.map((record) => record.settlementId));
      }
    };
    const [mine, theirs] = await Promise.all([claimedBy(store), claimedBy(other)]);
    expect([...mine, ...theirs].sort()).toEqual(notifications.map((one) => one.settlementId).sort());
  });

  test('reads a notification stored before confirmation existed as UNCHECKED, from a store migrated from the second schema', async () => {
    const database = await backend.create();
    const kind = backend.name === 'PostgreSQL' ? 'postgres' : 'sqlite';
    const postgres = kind === 'postgres';
    const [first, second] = await loadMigrations(kind);
    await database.exec(`${first!.sql};
      ${second!.sql};
      CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at ${postgres ? 'TIMESTAMPTZ NOT NULL DEFAULT now()' : 'TEXT NOT NULL'});
      INSERT INTO schema_migrations VALUES (1, '${first!.name}', '2026-01-01T00:00:00.000Z'), (2, '${second!.name}', '2026-01-02T00:00:00.000Z');
      INSERT INTO collection_notifications (settlement_id, session_id, account_number, transaction_amount, received_at, raw_body${postgres ? ', event_time, transaction_amount_numeric' : ''})
        VALUES ('OLD-1', 'S-old', '0123456789', '1500.00', '2026-01-01T00:00:00.000Z', '{}'${postgres ? ', now(), 1500' : ''})`);
    const store = await database.open();
    const [old] = await store.getMany(['OLD-1']);
    expect(old).toMatchObject({ settlementId: 'OLD-1', source: 'WEBHOOK', confirmation: UNCHECKED });
    // Nothing waits for the bank: the migration queued no call.
    expect(await store.confirmations.countPending()).toBe(0);
    expect(await store.confirmations.claim({ limit: 10, leaseMs: 60_000 })).toEqual([]);
  });

  test('logs the notifications confirmed before the log existed, from a store migrated from the fourth schema', async () => {
    const database = await backend.create();
    const kind = backend.name === 'PostgreSQL' ? 'postgres' : 'sqlite';
    const postgres = kind === 'postgres';
    const migrations = (await loadMigrations(kind)).filter((migration) => migration.version <= 4);
    await database.exec(`${migrations.map((migration) => migration.sql).join(';\n')};
      CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at ${postgres ? 'TIMESTAMPTZ NOT NULL DEFAULT now()' : 'TEXT NOT NULL'});
      INSERT INTO schema_migrations VALUES ${migrations.map((migration) => `(${migration.version}, '${migration.name}', '2026-01-01T00:00:00.000Z')`).join(', ')};
      INSERT INTO collection_notifications (settlement_id, session_id, account_number, transaction_amount, received_at, raw_body, confirmation_status${postgres ? ', event_time, transaction_amount_numeric' : ''})
        VALUES ('OLD-1', 'S-1', '0123456789', '1500.00', '2026-01-01T00:00:00.000Z', '{}', 'CONFIRMED'${postgres ? ', now(), 1500' : ''}),
          ('OLD-2', 'S-2', '0123456789', '1500.00', '2026-01-01T00:00:00.000Z', '{}', 'PENDING'${postgres ? ', now(), 1500' : ''}),
          ('OLD-3', 'S-3', '0123456789', '1500.00', '2026-01-01T00:00:00.000Z', '{}', 'CONFIRMED'${postgres ? ', now(), 1500' : ''})`);
    const store = await database.open();
    expect(await confirmedIds(store, 2)).toEqual(['OLD-1', 'OLD-3']);
    await store.confirmations.record([outcome('OLD-2')]);
    expect(await confirmedIds(store, 3)).toEqual(['OLD-1', 'OLD-3', 'OLD-2']);
  });

  testPostgres('takes a row written without a status, as a replica of an earlier release writes one, as PENDING', async () => {
    const { database, store } = await setup();
    await database.exec(`INSERT INTO collection_notifications (settlement_id, session_id, account_number, transaction_amount, received_at, raw_body, event_time, transaction_amount_numeric)
      VALUES ('ROLLING-1', 'S-1', '0123456789', '1500.00', '2026-01-01T00:00:00.000Z', '{}', now(), 1500)`);
    expect((await store.getMany(['ROLLING-1']))[0]!.confirmation.status).toBe('PENDING');
    expect((await store.confirmations.claim({ limit: 5, leaseMs: 60_000 })).map((one) => one.settlementId)).toEqual(['ROLLING-1']);
  });

  testPostgres('reads the log of confirmations in commit order: one committed late, below a later one, is never skipped', async () => {
    const { database, store } = await setup();
    const [late, early] = [pending(), pending()];
    await stored(store, late, early);
    // A replica's confirming transaction that has written and not committed yet.
    const holder = await postgresSession((database as UrlTestDatabase).storeUrl);
    await holder.query('BEGIN');
    await holder.query(`UPDATE collection_notifications SET confirmation_status = 'CONFIRMED' WHERE settlement_id = $1`, [
      late.settlementId,
    ]);
    await store.confirmations.record([outcome(early.settlementId)]);
    // Committed, but above a transaction still running: not settled, not listed.
    expect(await store.confirmationLog.listAfter({ after: START_OF_LOG, limit: 10 })).toEqual([]);
    expect(await store.confirmationLog.committedHead()).not.toEqual(START_OF_LOG);
    await holder.query('COMMIT');
    expect(await confirmedIds(store, 2)).toEqual([late.settlementId, early.settlementId]);
  });

  test('refuses every call of the queue after close', async () => {
    const { store } = await setup();
    await store.close();
    const calls = [
      store.confirmations.claim({ limit: 1, leaseMs: 1_000 }),
      store.confirmations.record([outcome('x')]),
      store.confirmations.defer(['x'], 0),
      store.confirmations.retry([retry('x')]),
      store.confirmations.decide({
        settlementId: 'x',
        status: 'CONFIRMED',
        decidedBy: 'ops',
        reason: 'seen',
        decidedAt: '2026-11-23T09:00:00.000Z',
      }),
      store.confirmations.countPending(),
      store.confirmations.oldestPending(),
      store.confirmationLog.listAfter({ after: START_OF_LOG, limit: 1 }),
      store.confirmationLog.settledHead(),
    ];
    for (const call of calls) await expect(call).rejects.toThrow(/store is closed/);
  });
});

describe.each(storeBackends.filter((backend) => backend.name.startsWith('SQLite')))(
  'outcomes on the connection the webhook writes on, $name',
  (backend) => {
    it("ride a batch of deliveries written in the same turn, and one the database refuses fails alone, never the deliveries'", async () => {
      const database = await backend.create();
      const store = await database.open();
      const [good, refused] = [pending(), pending()];
      await stored(store, good, refused);
      await database.exec(`CREATE TRIGGER refuse_outcome BEFORE UPDATE OF confirmation_status ON collection_notifications
      WHEN NEW.settlement_id = '${refused.settlementId}' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
      const delivery = notification();
      const [recordedGood, recordedRefused, inserted] = await Promise.allSettled([
        store.confirmations.record([outcome(good.settlementId)]),
        store.confirmations.record([outcome(refused.settlementId)]),
        store.insert(delivery),
      ]);
      expect(recordedGood).toEqual({ status: 'fulfilled', value: [true] });
      expect(recordedRefused).toMatchObject({ status: 'rejected' });
      expect(inserted).toMatchObject({ status: 'fulfilled', value: { status: 'inserted' } });
      const [readGood, readRefused, readDelivery] = await store.getMany([good.settlementId, refused.settlementId, delivery.settlementId]);
      expect([readGood!.confirmation.status, readRefused!.confirmation.status, readDelivery?.settlementId]).toEqual([
        'CONFIRMED',
        'PENDING',
        delivery.settlementId,
      ]);
    });
  },
);
