import { describe, expect, it, vi } from 'vitest';
import { newNotification as notification } from '../../test/helpers/notifications.ts';
import type { CollectionNotificationRecord, NewCollectionNotification } from '../domain/index.ts';
import { createInsertBatcher, UnstorableNotificationError, type WriteBatch } from './batch.ts';
import { insertedRecord } from './notification-row.ts';

/** A write that stores in memory, remembering each batch it was given. */
function memoryWrite() {
  const rows = new Map<string, CollectionNotificationRecord>();
  const calls: NewCollectionNotification[][] = [];
  const write: WriteBatch = async (notifications) => {
    calls.push(notifications);
    const records = notifications.map((one) => {
      if (rows.has(one.settlementId)) return null;
      const record = insertedRecord(one, { txid: 0, seq: rows.size + 1 });
      rows.set(one.settlementId, record);
      return record;
    });
    return { records, settled: { txid: 0, seq: rows.size } };
  };
  return { write, calls };
}

describe('createInsertBatcher', () => {
  it('sends a settlementId once per batch, answering its other copies duplicate', async () => {
    const { write, calls } = memoryWrite();
    const batcher = createInsertBatcher(write);
    const one = notification();
    const results = await Promise.all([batcher.insert(one), batcher.insert(one), batcher.insert({ ...one, narration: 'again' })]);
    expect(results.map((result) => result.status)).toEqual(['inserted', 'duplicate', 'duplicate']);
    expect(calls).toEqual([[one]]);
  });

  it('closes a batch once its raw bodies reach the character limit, but always takes at least one', async () => {
    const { write, calls } = memoryWrite();
    const batcher = createInsertBatcher(write, { limits: { maxItems: 4, maxChars: 25 } });
    const big = notification({ rawBody: 'x'.repeat(150) });
    const small = () => notification({ rawBody: 'y'.repeat(10) });
    await Promise.all([big, small(), small(), small(), small(), small()].map((one) => batcher.insert(one)));
    expect(calls.map((batch) => batch.length)).toEqual([1, 3, 2]);
  });

  it('answers as usual when the batch-size histogram throws', async () => {
    const { write } = memoryWrite();
    const observed: [string, number][] = [];
    const batcher = createInsertBatcher(write, {
      batchSizes: {
        observe: ({ outcome }, size) => {
          observed.push([outcome, size]);
          throw new Error('observer failed');
        },
      },
    });
    expect(await batcher.insert(notification())).toMatchObject({ status: 'inserted' });
    expect(observed).toEqual([['committed', 1]]);
  });

  it('drains: resolves once the batch in flight and the ones queued behind it are answered', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { write, calls } = memoryWrite();
    const batcher = createInsertBatcher(async (batch) => {
      await gate;
      return write(batch);
    });
    const answered: string[] = [];
    const first = batcher.insert(notification()).then((result) => answered.push(result.status));
    await new Promise((resolve) => setImmediate(resolve));
    const second = batcher.insert(notification()).then((result) => answered.push(result.status));
    const drained = batcher.drain().then(() => answered.push('drained'));
    release();
    await Promise.all([first, second, drained]);
    expect(answered).toEqual(['inserted', 'inserted', 'drained']);
    expect(calls.map((batch) => batch.length)).toEqual([1, 1]);
  });

  it('writes up to `inFlight` batches at once, and gathers the next while that many are written', async () => {
    const gates: (() => void)[] = [];
    const { write } = memoryWrite();
    const started: number[] = [];
    const batcher = createInsertBatcher(
      async (batch) => {
        started.push(batch.length);
        await new Promise<void>((resolve) => gates.push(resolve));
        return write(batch);
      },
      { inFlight: 2 },
    );
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    const first = batcher.insert(notification());
    await nextTurn();
    const second = batcher.insert(notification());
    await nextTurn();
    // Both are being written; these two wait, together.
    const waiting = [batcher.insert(notification()), batcher.insert(notification())];
    await nextTurn();
    expect(started).toEqual([1, 1]);
    gates[1]!();
    expect((await second).status).toBe('inserted');
    // The write that ended frees its place: the two that waited go next, as one batch.
    await vi.waitFor(() => expect(started).toEqual([1, 1, 2]));
    const drained = batcher.drain();
    gates[0]!();
    gates[2]!();
    await drained;
    expect((await Promise.all([first, ...waiting])).map((result) => result.status)).toEqual(['inserted', 'inserted', 'inserted']);
  });

  it('retries a statement the database refused in halves, so only the refused row fails', async () => {
    const { write, calls } = memoryWrite();
    const refusal = Object.assign(new Error('refused'), { refused: true });
    const refusing: WriteBatch = async (notifications) => {
      if (notifications.some((one) => one.settlementId === 'poison')) {
        calls.push(notifications);
        throw refusal;
      }
      return write(notifications);
    };
    const batcher = createInsertBatcher(refusing, { refusedStatement: (error) => (error as { refused?: boolean }).refused === true });
    const good = Array.from({ length: 6 }, () => notification());
    const poison = notification({ settlementId: 'poison' });
    const results = await Promise.allSettled([...good.slice(0, 3), poison, poison, ...good.slice(3)].map((one) => batcher.insert(one)));
    expect(results.map((result) => (result.status === 'fulfilled' ? result.value.status : 'rejected'))).toEqual([
      'inserted',
      'inserted',
      'inserted',
      'rejected',
      'rejected',
      'inserted',
      'inserted',
      'inserted',
    ]);
    // Seven distinct rows, halved wherever the poison is: 7 ✗, 4 ✗, 2 ✓, 2 ✗, 1 ✓, 1 ✗ (the poison), 3 ✓.
    expect(calls.map((batch) => batch.length)).toEqual([7, 4, 2, 2, 1, 1, 3]);
  });

  it('rejects the row the database refused for its content as unstorable, and any other lone failure as it came', async () => {
    const { write } = memoryWrite();
    const refusals = { poison: Object.assign(new Error('check violated'), { aboutRow: true }), unlucky: new Error('deadlock detected') };
    const refusing: WriteBatch = async (notifications) => {
      const refused = notifications.find((one) => one.settlementId in refusals);
      if (refused) throw refusals[refused.settlementId as keyof typeof refusals];
      return write(notifications);
    };
    const batcher = createInsertBatcher(refusing, {
      refusedStatement: () => true,
      refusedRow: (error) => (error as { aboutRow?: boolean }).aboutRow === true,
    });
    const [poison, unlucky, good] = await Promise.allSettled(
      [notification({ settlementId: 'poison' }), notification({ settlementId: 'unlucky' }), notification()].map((one) =>
        batcher.insert(one),
      ),
    );
    expect(poison).toMatchObject({ status: 'rejected', reason: expect.any(UnstorableNotificationError) });
    expect((poison as PromiseRejectedResult).reason.cause).toBe(refusals.poison);
    expect(unlucky).toMatchObject({ status: 'rejected', reason: refusals.unlucky });
    expect(good).toMatchObject({ status: 'fulfilled', value: { status: 'inserted' } });
  });

  it('fails every insert at once when the failure is not a refusal of the statement', async () => {
    const calls: number[] = [];
    const down: WriteBatch = async (notifications) => {
      calls.push(notifications.length);
      throw new Error('connection lost');
    };
    const batcher = createInsertBatcher(down, { refusedStatement: () => false });
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => batcher.insert(notification())));
    expect(results.every((result) => result.status === 'rejected')).toBe(true);
    expect(calls).toEqual([5]);
  });
});
