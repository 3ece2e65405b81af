import { describe, expect, it } from 'vitest';
import { newNotification } from '../../test/helpers/notifications.ts';
import { silent } from '../../test/helpers/stores.ts';
import type { MoneyFields, NewQuarantinedDelivery } from '../domain/index.ts';
import { createMetrics } from '../metrics.ts';
import type { QuarantineStore } from '../store/types.ts';
import { createQuarantineKeeper } from './quarantine.ts';

const MiB = 1024 * 1024;

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
      return deliveries.length;
    },
    list: async () => [],
    review: async () => ({ status: 'unknown' }),
    countUnreviewed: async () => 0,
  };
  return { quarantine, batches, release: () => gate.resolve() };
}

async function notKept(metrics: ReturnType<typeof createMetrics>, cause: string): Promise<number> {
  return (await metrics.quarantineNotKept.get()).values.filter((value) => value.labels.cause === cause).reduce((sum, value) => sum + value.value, 0);
}

describe('the quarantine keeper', () => {
  it('writes nothing in the turn that handed it over, then what came in that turn as one batch', async () => {
    const { quarantine, batches } = recordingQuarantine();
    const keeper = createQuarantineKeeper({ store: { quarantine, moneyOf: async () => null }, maxUnreviewed: 10, metrics: createMetrics(), logger: silent });
    const handed = [delivery(), delivery(), delivery()];
    for (const one of handed) keeper.keep(one);
    expect(batches).toEqual([]);
    await keeper.drain();
    expect(batches).toEqual([handed]);
  });

  it('holds at most 64 MiB of bodies, waiting or being written: past it, counts and logs what it does not keep', async () => {
    const { quarantine, batches, release } = recordingQuarantine({ held: true });
    const metrics = createMetrics();
    const keeper = createQuarantineKeeper({ store: { quarantine, moneyOf: async () => null }, maxUnreviewed: 1_000, metrics, logger: silent });
    for (let i = 0; i < 65; i += 1) keeper.keep(delivery(MiB));
    expect(await notKept(metrics, 'backlog_full')).toBe(1);
    const drained = keeper.drain();
    // Batches of at most 16 MiB of bodies, one at a time.
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches.map((batch) => batch.length)).toEqual([16]);
    release();
    await drained;
    expect(batches.map((batch) => batch.length)).toEqual([16, 16, 16, 16]);
    expect(await notKept(metrics, 'backlog_full')).toBe(1);
    const kept = (await metrics.webhookQuarantined.get()).values.reduce((sum, value) => sum + value.value, 0);
    expect(kept).toBe(64);
  });

  it('keeps a duplicate whose money differs from the stored, and drains only once it is written', async () => {
    const { quarantine, batches } = recordingQuarantine();
    const stored = newNotification({ transactionAmount: '1500.00' });
    const read = Promise.withResolvers<MoneyFields>();
    const keeper = createQuarantineKeeper({ store: { quarantine, moneyOf: () => read.promise }, maxUnreviewed: 10, metrics: createMetrics(), logger: silent });
    const body = new TextEncoder().encode('{"forged":true}');
    keeper.checkDuplicate({ ...stored, transactionAmount: '950000.00' }, body);
    keeper.checkDuplicate({ ...stored, transactionAmount: '1500.0' }, body);
    const drained = keeper.drain();
    read.resolve(stored);
    await drained;
    expect(batches).toEqual([[expect.objectContaining({ kind: 'CONFLICT', detail: 'transactionAmount 950000.00 (stored 1500.00)', rawBody: body })]]);
  });
});
