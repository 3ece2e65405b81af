import { describe, expect, it } from 'vitest';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import type { BatchOutcome } from './batch.ts';
import { KNOWN_STORED_IDS } from './core.ts';
import { storeBackends, untilSettled } from '../../test/helpers/stores.ts';
import type { InsertResult } from './types.ts';
import { comparePositions, NOTHING_ASKED, START_OF_LOG, UNCHECKED, type LogPosition } from '../domain/index.ts';

/** Lets the store's batch, flushed on setImmediate, start (and on the main thread, finish). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const anyPosition = { txid: expect.any(Number), seq: expect.any(Number) };

const expectInOrder = (positions: LogPosition[]) => expect(positions).toEqual(positions.toSorted(comparePositions));

/** Where an insert was stored; throws when it was not stored. */
const positionOf = (result: InsertResult): LogPosition => {
  if (result.status !== 'inserted') throw new Error('not inserted');
  return result.notification.position;
};

describe.each(storeBackends)('group commit on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;
  // Another store on the same database stands for another replica: an in-memory database backs one store only.
  const withReplica = backend.enabled && backend.shared ? it : it.skip;

  /** A fresh database and a store on it that reports every batch it writes. */
  async function setup() {
    const database = await backend.create();
    const batches: { size: number; outcome: BatchOutcome }[] = [];
    // In place of the batch-size histogram: each observation, in order.
    const store = await database.open(undefined, { batchSizes: { observe: ({ outcome }, size) => void batches.push({ size, outcome }) } });
    return { database, store, batches };
  }

  /** As setup, with one notification stored by another replica: this store learns of it only from the database. */
  async function setupWithOneStoredElsewhere() {
    const { database, store, batches } = await setup();
    const stored = notification();
    const replica = await database.open();
    await replica.insert(stored);
    await replica.close();
    return { store, batches, stored };
  }

  withReplica('answers each insert of one batch for itself: new, stored by another replica, and one settlementId twice', async () => {
    const { store, batches, stored } = await setupWithOneStoredElsewhere();

    const fresh = notification();
    const twice = notification();
    const results = await Promise.all([
      store.insert(fresh),
      store.insert({ ...stored, transactionAmount: '9999.99' }),
      store.insert(twice),
      store.insert({ ...twice, sessionId: 'the-second-copy' }),
    ]);

    expect(results.map((result) => result.status)).toEqual(['inserted', 'duplicate', 'inserted', 'duplicate']);
    expect(results[0]).toEqual({
      status: 'inserted',
      notification: { ...fresh, position: anyPosition, source: 'WEBHOOK', confirmation: { ...UNCHECKED, ...NOTHING_ASKED } },
      settled: anyPosition,
    });
    expect(results[2]).toEqual({
      status: 'inserted',
      notification: { ...twice, position: anyPosition, source: 'WEBHOOK', confirmation: { ...UNCHECKED, ...NOTHING_ASKED } },
      settled: anyPosition,
    });
    // One batch, one commit, and positions in the batch's order: the order the inserts came (on
    // PostgreSQL a batch is written in settlementId order, which these ids share).
    // One statement of the three distinct settlementIds: the second copy of one never reaches the database.
    expect(batches).toEqual([{ size: 3, outcome: 'committed' }]);
    expect(comparePositions(positionOf(results[2]), positionOf(results[0]))).toBeGreaterThan(0);
    await untilSettled(store, results);
    const all = await store.listAfter({ after: START_OF_LOG, limit: 10 });
    expect(all.map((record) => [record.settlementId, record.sessionId, record.transactionAmount])).toEqual([
      [stored.settlementId, stored.sessionId, '1500.00'],
      [fresh.settlementId, fresh.sessionId, '1500.00'],
      [twice.settlementId, twice.sessionId, '1500.00'],
    ]);
  });

  withReplica('rolls back a batch of duplicates only, instead of committing it', async () => {
    const { store, batches, stored } = await setupWithOneStoredElsewhere();
    const results = await Promise.all([store.insert(stored), store.insert(stored), store.insert({ ...stored, narration: 'retry' })]);
    expect(results).toEqual([{ status: 'duplicate' }, { status: 'duplicate' }, { status: 'duplicate' }]);
    expect(batches).toEqual([{ size: 1, outcome: 'rolled-back' }]);
  });

  test('rejects every insert of a batch whose commit fails, stores nothing, and the retries are inserted', async () => {
    const { database, store, batches } = await setup();
    const stored = notification();
    await store.insert(stored);
    batches.length = 0;
    await database.breakInserts();

    const attempt = [notification(), notification(), notification()];
    const failed = await Promise.allSettled(attempt.map((one) => store.insert(one)));
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(failed.every((result) => result.status === 'rejected' && /disk full/.test(String(result.reason)))).toBe(true);
    // Refused by the database, the batch is retried in halves down to single rows, each refused too.
    expect(batches.map(({ size, outcome }) => `${size} ${outcome}`)).toEqual(['3 failed', '2 failed', '1 failed', '1 failed', '1 failed']);
    expect(await store.getMany(attempt.map((one) => one.settlementId))).toEqual([null, null, null]);
    // What it stored before is still its own, whatever the database's state now.
    expect(await store.insert(stored)).toEqual({ status: 'duplicate' });

    await database.repairInserts();
    const retried = await Promise.all(attempt.map((one) => store.insert(one)));
    expect(retried.map((result) => result.status)).toEqual(['inserted', 'inserted', 'inserted']);
    expect(batches.at(-1)).toEqual({ size: 3, outcome: 'committed' });
  });

  test('gathers the inserts that arrive while a batch is being written into the next batch', async () => {
    const { store, batches } = await setup();
    const first = Array.from({ length: 3 }, () => store.insert(notification()));
    await nextTurn();
    const second = Array.from({ length: 5 }, () => store.insert(notification()));
    const results = await Promise.all([...first, ...second]);
    expect(results.every((result) => result.status === 'inserted')).toBe(true);
    // Reported as each ends, which on PostgreSQL (both written at once) may be either order.
    expect(batches.toSorted((a, b) => a.size - b.size)).toEqual([
      { size: 3, outcome: 'committed' },
      { size: 5, outcome: 'committed' },
    ]);
    // Each batch's positions follow its inserts; on PostgreSQL the two batches may commit in either order.
    expectInOrder(results.slice(0, 3).map(positionOf));
    expectInOrder(results.slice(3).map(positionOf));
  });

  test('splits a long queue into batches of at most 500, positions following the order of the inserts', async () => {
    const { store, batches } = await setup();
    const results = await Promise.all(Array.from({ length: 620 }, () => store.insert(notification())));
    // Reported as each ends: on PostgreSQL both are written at once, and the smaller may end first.
    expect(batches.map((batch) => batch.size).toSorted((a, b) => b - a)).toEqual([500, 120]);
    const positions = results.map(positionOf);
    expect(new Set(positions.map(({ txid, seq }) => `${txid}.${seq}`)).size).toBe(620);
    expectInOrder(positions.slice(0, 500));
    expectInOrder(positions.slice(500));
  });

  test('stores each settlementId once when batches written at once hold the same ids in other orders', async () => {
    const { store, batches } = await setup();
    const notifications = Array.from({ length: 40 }, () => notification());
    // Four batches, a turn apart, so PostgreSQL writes them at once: ascending, descending, then shuffled.
    const orders = [notifications, notifications.toReversed(), ...[1, 2].map(() => notifications.toSorted(() => Math.random() - 0.5))];
    const settled: Promise<PromiseSettledResult<InsertResult>[]>[] = [];
    for (const order of orders) {
      settled.push(Promise.allSettled(order.map((one, i) => store.insert({ ...one, sessionId: `${one.sessionId}-${i}` }))));
      await nextTurn();
    }
    const results = (await Promise.all(settled)).flat();
    // None failed: two of them waiting on each other would have deadlocked, failing one batch.
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    const inserted = results.flatMap((result) =>
      result.status === 'fulfilled' && result.value.status === 'inserted' ? [result.value.notification.settlementId] : [],
    );
    expect(inserted.toSorted()).toEqual(notifications.map((one) => one.settlementId).toSorted());
    // On PostgreSQL all four are written at once, none having committed when the next gathers; on
    // SQLite the first commits within its turn, and the store then answers the others itself.
    expect(batches.map((batch) => batch.size)).toEqual(backend.writesBatchesAtOnce ? [40, 40, 40, 40] : [40]);
  });

  test('answers the remembered duplicates of one turn together, once the turn is over', async () => {
    const { store } = await setup();
    const stored = notification();
    await store.insert(stored);
    const answered: string[] = [];
    const retries = ['first', 'second'].map((name) => store.insert(stored).then(() => answered.push(name)));
    // Not within the turn, whatever its promise callbacks do...
    for (let i = 0; i < 10; i += 1) await Promise.resolve();
    expect(answered).toEqual([]);
    // ...but both once it is over.
    await nextTurn();
    expect(answered).toEqual(['first', 'second']);
    await Promise.all(retries);
  });

  test('answers a settlementId it stored, or found stored, without writing it again', async () => {
    const { store, batches } = await setup();
    const stored = notification();
    await store.insert(stored);
    batches.length = 0;
    const again = await Promise.all([store.insert(stored), store.insert({ ...stored, sessionId: 'a-retry', narration: 'retry' })]);
    expect(again).toEqual([{ status: 'duplicate' }, { status: 'duplicate' }]);
    // No batch: nothing went to the database.
    expect(batches).toEqual([]);
    // The first insert is what is stored.
    expect((await store.getMany([stored.settlementId]))[0]).toMatchObject({ sessionId: stored.sessionId, narration: stored.narration });
  });

  withReplica('remembers what another replica stored once its own insert finds it', async () => {
    const { store, batches, stored } = await setupWithOneStoredElsewhere();
    expect(await store.insert(stored)).toEqual({ status: 'duplicate' });
    expect(batches).toEqual([{ size: 1, outcome: 'rolled-back' }]);
    expect(await store.insert(stored)).toEqual({ status: 'duplicate' });
    expect(batches).toHaveLength(1);
  });

  // The bound is the store core's, the same on every backend: the in-memory database fills it fastest.
  it.runIf(backend.enabled && !backend.shared)(
    `remembers the last ${KNOWN_STORED_IDS} settlementIds: an older one is looked up in the database again`,
    async () => {
      const { store, batches } = await setup();
      const oldest = notification();
      await store.insert(oldest);
      await Promise.all(Array.from({ length: KNOWN_STORED_IDS }, () => store.insert(notification())));
      batches.length = 0;
      expect(await store.insert(oldest)).toEqual({ status: 'duplicate' });
      expect(batches).toEqual([{ size: 1, outcome: 'rolled-back' }]);
    },
  );

  test('answers every insert queued before close, and stores each of them', async () => {
    const { database, store } = await setup();
    const queued = Array.from({ length: 5 }, () => store.insert(notification()));
    const closed = store.close();
    await expect(store.insert(notification())).rejects.toThrow(/closed/);
    const results = await Promise.all(queued);
    await closed;
    expect(results.every((result) => result.status === 'inserted')).toBe(true);
    if (!backend.shared) return; // an in-memory database is gone with its store
    const [{ n }] = (await database.query('SELECT count(*) AS n FROM collection_notifications')) as [{ n: unknown }];
    expect(Number(n)).toBe(5);
  });
});
