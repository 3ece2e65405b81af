import { describe, expect, it } from 'vitest';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import { storeBackends, untilSettled } from '../../test/helpers/stores.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { PENDING, START_OF_LOG, UNCHECKED, type ConfirmationOutcome, type LogPosition } from '../domain/index.ts';
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

const before = (position: LogPosition): LogPosition => ({ txid: position.txid, seq: position.seq - 1 });

describe.each(storeBackends)('the confirmation queue on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;
  const testShared = backend.enabled && backend.shared ? it : it.skip;

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
    expect(await database.query('SELECT confirmation_attempts AS n FROM collection_notifications')).toEqual([{ n: 2 }]);
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
      status: 'CONFIRMED',
      checkedAt: '2026-11-22T13:05:10.000Z',
      differences: [],
      acknowledgedByBank: true,
    });
    expect(readB!.confirmation).toEqual({
      status: 'MISMATCHED',
      checkedAt: '2026-11-22T13:05:10.000Z',
      differences: ['transactionAmount', 'currency'],
      acknowledgedByBank: false,
    });
    expect(readUnchecked!.confirmation).toEqual(UNCHECKED);
    expect(await store.confirmations.countPending()).toBe(0);
    expect(await store.confirmations.oldestPending()).toBeNull();
    expect(await store.confirmations.claim({ limit: 5, leaseMs: 60_000 })).toEqual([]);
    await expect(store.confirmations.record([outcome(a.settlementId, { status: 'PENDING' as never })])).rejects.toThrow(RangeError);
    expect(await store.confirmations.record([])).toEqual([]);
  });

  test('is decided through the settled head while nothing is PENDING, and through just before the first PENDING one', async () => {
    const { store } = await setup();
    expect(await store.confirmations.decidedHead()).toEqual(START_OF_LOG);
    const [a, b, c, d] = [notification(), pending(), pending(), notification()];
    const [atA] = await stored(store, a);
    expect(await store.confirmations.decision()).toEqual({ through: atA, pendingAt: undefined });
    const [atB, atC, atD] = await stored(store, b, c, d);
    expect(await store.confirmations.decision()).toEqual({ through: before(atB!), pendingAt: atB });
    expect(await store.confirmations.decidedHead()).toEqual(before(atB!));
    await store.confirmations.record([outcome(b.settlementId, { status: 'NOT_AT_BANK', acknowledgedByBank: null })]);
    expect(await store.confirmations.decidedHead()).toEqual(before(atC!));
    await store.confirmations.record([outcome(c.settlementId)]);
    expect(await store.confirmations.decision()).toEqual({ through: atD, pendingAt: undefined });
  });

  test('lists the log through a position, and only its CONFIRMED notifications when asked', async () => {
    const { store } = await setup();
    const [a, b, c, d] = [
      pending({ accountNumber: '1111111111' }),
      pending(),
      pending({ accountNumber: '1111111111' }),
      pending({ accountNumber: '1111111111' }),
    ];
    const positions = await stored(store, a, b, c, d);
    await store.confirmations.record([
      outcome(a.settlementId),
      outcome(b.settlementId),
      outcome(c.settlementId, { status: 'MISMATCHED', differences: ['vatAmount'] }),
      outcome(d.settlementId),
    ]);
    const ids = (records: { settlementId: string }[]) => records.map((record) => record.settlementId);
    expect(ids(await store.listAfter({ after: START_OF_LOG, through: positions[2], limit: 10 }))).toEqual(
      [a, b, c].map((n) => n.settlementId),
    );
    expect(ids(await store.listAfter({ after: START_OF_LOG, confirmed: true, limit: 10 }))).toEqual([a, b, d].map((n) => n.settlementId));
    expect(ids(await store.listAfter({ after: positions[0]!, accountNumber: '1111111111', confirmed: true, limit: 10 }))).toEqual([
      d.settlementId,
    ]);
    expect(
      ids(
        await store.listAfter({
          after: START_OF_LOG,
          accounts: ['1111111111', '2222222222'],
          through: positions[2],
          confirmed: true,
          limit: 10,
        }),
      ),
    ).toEqual([a.settlementId]);
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
    expect(await store.confirmations.decidedHead()).toEqual(old!.position);
  });

  test('refuses every call of the queue after close', async () => {
    const { store } = await setup();
    await store.close();
    const calls = [
      store.confirmations.claim({ limit: 1, leaseMs: 1_000 }),
      store.confirmations.record([outcome('x')]),
      store.confirmations.defer(['x'], 0),
      store.confirmations.countPending(),
      store.confirmations.decidedHead(),
      store.confirmations.decision(),
      store.confirmations.oldestPending(),
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
