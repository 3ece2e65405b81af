import { describe, expect, it } from 'vitest';
import { newNotification } from '../../test/helpers/notifications.ts';
import { silent } from '../../test/helpers/stores.ts';
import type { MoneyFields, NewQuarantinedDelivery } from '../domain/index.ts';
import { createMetrics } from '../metrics.ts';
import type { KeepOutcome, QuarantineStore } from '../store/types.ts';
import { createQuarantineKeeper } from './quarantine.ts';

const MiB = 1024 * 1024;
const BOUNDS = { maxRows: 1_000, maxBytes: 1024 * MiB };

function delivery(bytes = 10): NewQuarantinedDelivery {
  return {
    kind: 'REJECTED',
    reason: 'body_not_json_object',
    detail: null,
    responseCode: '02',
    receivedAt: new Date().toISOString(),
    sessionId: null,
    settlementId: null,
    accountNumber: null,
    rawBody: new Uint8Array(bytes),
  };
}

/** A quarantine that records each batch it is given, its writes held until `release()` when `held`. */
function recordingQuarantine({ held = false } = {}) {
  const batches: NewQuarantinedDelivery[][] = [];
  const gate = Promise.withResolvers<void>();
  if (!held) gate.resolve();
  const quarantine: QuarantineStore = {
    async keep(deliveries) {
      batches.push([...deliveries]);
      await gate.promise;
      return deliveries.map(() => 'kept' as const);
    },
    list: async () => [],
    review: async () => ({ status: 'unknown' }),
    countUnreviewed: async () => 0,
    withTransferIds: async () => [],
  };
  return { quarantine, batches, release: () => gate.resolve() };
}

async function notKept(metrics: ReturnType<typeof createMetrics>, cause: string): Promise<number> {
  return (await metrics.quarantineNotKept.get()).values
    .filter((value) => value.labels.cause === cause)
    .reduce((sum, value) => sum + value.value, 0);
}

describe('the quarantine keeper', () => {
  it('writes what was handed over in one turn as one batch, and answers each only once that batch is written', async () => {
    const { quarantine, batches, release } = recordingQuarantine({ held: true });
    const keeper = createQuarantineKeeper({
      store: { quarantine, moneyOf: async () => null },
      bounds: BOUNDS,
      metrics: createMetrics(),
      logger: silent,
    });
    const handed = [delivery(), delivery(), delivery()];
    const answered: boolean[] = [];
    const kept = handed.map((one) => keeper.keep(one).then((value) => void answered.push(value)));
    expect(batches).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([handed]);
    // Written, not yet committed: nobody is answered.
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toEqual([]);
    release();
    await Promise.all(kept);
    expect(answered).toEqual([true, true, true]);
  });

  it('answers false, counted by cause, for what the store did not keep: a bound reached, a delivery it refused, or a failed write of the whole batch', async () => {
    const metrics = createMetrics();
    const outcomes: KeepOutcome[] = ['kept', 'over_bytes', 'over_rows', { failed: new Error('refused') }, 'kept'];
    let fail = false;
    const quarantine: QuarantineStore = {
      keep: async () => {
        if (fail) throw new Error('the disk is full');
        return outcomes;
      },
      list: async () => [],
      review: async () => ({ status: 'unknown' }),
      countUnreviewed: async () => 0,
      withTransferIds: async () => [],
    };
    const keeper = createQuarantineKeeper({ store: { quarantine, moneyOf: async () => null }, bounds: BOUNDS, metrics, logger: silent });
    const five = Array.from({ length: 5 }, () => delivery());
    expect(await Promise.all(five.map((one) => keeper.keep(one)))).toEqual([true, false, false, false, true]);
    expect([await notKept(metrics, 'over_bytes'), await notKept(metrics, 'over_limit'), await notKept(metrics, 'write_failed')]).toEqual([
      1, 1, 1,
    ]);
    fail = true;
    expect(await Promise.all([delivery(), delivery()].map((one) => keeper.keep(one)))).toEqual([false, false]);
    expect(await notKept(metrics, 'write_failed')).toBe(3);
  });

  it('holds at most 64 MiB of bodies, waiting or being written: past it, answers false at once and counts it', async () => {
    const { quarantine, batches, release } = recordingQuarantine({ held: true });
    const metrics = createMetrics();
    const keeper = createQuarantineKeeper({ store: { quarantine, moneyOf: async () => null }, bounds: BOUNDS, metrics, logger: silent });
    const kept = Array.from({ length: 64 }, () => keeper.keep(delivery(MiB)));
    expect(await keeper.keep(delivery(MiB))).toBe(false);
    expect(await notKept(metrics, 'backlog_full')).toBe(1);
    // Batches of at most 16 MiB of bodies, one at a time.
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches.map((batch) => batch.length)).toEqual([16]);
    release();
    expect(await Promise.all(kept)).toEqual(Array(64).fill(true));
    expect(batches.map((batch) => batch.length)).toEqual([16, 16, 16, 16]);
    expect(await notKept(metrics, 'backlog_full')).toBe(1);
    const counted = (await metrics.webhookQuarantined.get()).values.reduce((sum, value) => sum + value.value, 0);
    expect(counted).toBe(64);
  });

  it('keeps a duplicate whose money differs from the stored, and tells an honest retry from it', async () => {
    const { quarantine, batches } = recordingQuarantine();
    const stored = newNotification({ transactionAmount: '1500.00' });
    const read = Promise.withResolvers<MoneyFields>();
    const keeper = createQuarantineKeeper({
      store: { quarantine, moneyOf: () => read.promise },
      bounds: BOUNDS,
      metrics: createMetrics(),
      logger: silent,
    });
    const body = new TextEncoder().encode('{"forged":true}');
    const forged = keeper.checkDuplicate({ ...stored, transactionAmount: '950000.00' }, body);
    const retry = keeper.checkDuplicate({ ...stored, transactionAmount: '1500.0' }, body);
    read.resolve(stored);
    expect([await forged, await retry]).toEqual(['kept', 'retry']);
    expect(batches).toEqual([
      [expect.objectContaining({ kind: 'CONFLICT', detail: 'transactionAmount 950000.00 (stored 1500.00)', rawBody: body })],
    ]);
  });

  it('cannot tell a conflict when the stored money cannot be read: not kept, so never answered 01', async () => {
    const { quarantine } = recordingQuarantine();
    const metrics = createMetrics();
    const keeper = createQuarantineKeeper({
      store: { quarantine, moneyOf: async () => Promise.reject(new Error('down')) },
      bounds: BOUNDS,
      metrics,
      logger: silent,
    });
    expect(await keeper.checkDuplicate(newNotification(), new Uint8Array(1))).toBe('not-kept');
    expect(await notKept(metrics, 'write_failed')).toBe(1);
  });
});
