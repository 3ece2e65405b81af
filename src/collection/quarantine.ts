// Keeping what the webhook refuses, or takes for a conflict, in the store's quarantine before its
// reply is sent: the bank treats 02 as final and 01 as done, so a reply never runs ahead of our
// record of it, exactly as a 00 never runs ahead of its commit. A delivery that cannot be kept (the
// write fails, the quarantine is at one of its bounds) is counted and logged, and its reply is 03:
// the bank sends it again.
import {
  moneyDifferences,
  type MoneyField,
  type MoneyFields,
  type NewCollectionNotification,
  type NewQuarantinedDelivery,
} from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { CollectionStore, KeepOutcome, QuarantineBounds } from '../store/types.ts';

/** What the keeper takes: the store, its bounds, and where it counts and logs. */
export interface QuarantineKeeperDeps {
  store: Pick<CollectionStore, 'moneyOf' | 'quarantine'>;
  /** `QUARANTINE_MAX_ROWS` and `QUARANTINE_MAX_BYTES`. */
  bounds: QuarantineBounds;
  metrics: Metrics;
  logger: Logger;
}

/** Why a delivery was not kept: a bound of the quarantine, the store, or the keeper's own backlog. */
export type NotKeptCause = 'over_limit' | 'over_bytes' | 'write_failed' | 'backlog_full';

/** What became of a duplicate (answered 01 once kept): an honest retry, a conflict kept, or one that could not be. */
export type DuplicateOutcome = 'retry' | 'kept' | 'not-kept';

export interface QuarantineKeeper {
  /**
   * Keeps a delivery, written with the others handed over in the same turn (one transaction, one
   * commit); resolves true once committed, false once given up (counted and logged). Never rejects.
   */
  keep(delivery: NewQuarantinedDelivery): Promise<boolean>;
  /**
   * Compares a duplicate with the notification stored under its settlementId and, when their money
   * differs, keeps it as a CONFLICT; an honest retry is not kept. Never rejects.
   */
  checkDuplicate(notification: NewCollectionNotification, rawBody: Uint8Array): Promise<DuplicateOutcome>;
  /** Resolves once everything handed over so far is written, or given up and counted. */
  drain(): Promise<void>;
}

/**
 * Bodies held, waiting or being written, at most: past this (the store far slower than the
 * refusals), a delivery is not kept (03) rather than held. Each body is at most WEBHOOK_MAX_BODY_BYTES (1 MiB at most).
 */
const BACKLOG_BYTES = 64 * 1024 * 1024;
/** Deliveries written together (one transaction, one fsync), at most this many and these bytes of bodies. */
const BATCH = { deliveries: 100, bytes: 16 * 1024 * 1024 };

const BOUND_OF = { over_limit: 'QUARANTINE_MAX_ROWS', over_bytes: 'QUARANTINE_MAX_BYTES' } as const;

interface Waiting {
  delivery: NewQuarantinedDelivery;
  done(kept: boolean): void;
}

/**
 * Makes the keeper; writes go one batch at a time, so refusals never take more than one connection
 * (on PostgreSQL one of their own, never one a write of money needs).
 */
export function createQuarantineKeeper(deps: QuarantineKeeperDeps): QuarantineKeeper {
  const { metrics, logger } = deps;
  let pending: Waiting[] = [];
  /** Bytes of the bodies held: waiting, and in the batch being written. */
  let heldBytes = 0;
  let writing: Promise<void> | undefined;
  let scheduled = false;
  const checks = new Set<Promise<unknown>>();

  const notKept = (delivery: NewQuarantinedDelivery, cause: NotKeptCause, err?: unknown) => {
    metrics.quarantineNotKept.inc({ kind: delivery.kind, cause });
    const bound = cause === 'over_limit' || cause === 'over_bytes' ? BOUND_OF[cause] : undefined;
    logger[bound ? 'warn' : 'error'](
      { ...identify(delivery), cause, ...(err === undefined ? {} : { err }) },
      bound
        ? `collection notification not kept in the quarantine: ${bound} reached by what awaits review; answered 03, the bank sends it again`
        : 'collection notification not kept in the quarantine: the store failed; answered 03, the bank sends it again',
    );
    return false;
  };

  const wasKept = (delivery: NewQuarantinedDelivery, outcome: KeepOutcome) => {
    if (outcome === 'over_rows') return notKept(delivery, 'over_limit');
    if (outcome === 'over_bytes') return notKept(delivery, 'over_bytes');
    if (outcome !== 'kept') return notKept(delivery, 'write_failed', outcome.failed);
    metrics.webhookQuarantined.inc({ kind: delivery.kind, reason: delivery.reason });
    logger.info(identify(delivery), 'collection notification kept in the quarantine');
    return true;
  };

  // The store answers each delivery for itself (one it refuses fails alone); a batch that failed as a
  // whole (the store unreachable) is answered 03 throughout.
  const write = async (batch: Waiting[]) => {
    let outcomes: KeepOutcome[];
    try {
      outcomes = await deps.store.quarantine.keep(
        batch.map((waiting) => waiting.delivery),
        deps.bounds,
      );
    } catch (error) {
      for (const { delivery, done } of batch) done(notKept(delivery, 'write_failed', error));
      return;
    }
    batch.forEach(({ delivery, done }, index) => done(wasKept(delivery, outcomes[index]!)));
  };

  const flush = () => {
    scheduled = false;
    if (writing || pending.length === 0) return;
    let [count, bytes] = [0, 0];
    // Always one, however large; then as many as the batch's bounds allow.
    while (
      count < pending.length &&
      count < BATCH.deliveries &&
      (count === 0 || bytes + pending[count]!.delivery.rawBody.byteLength <= BATCH.bytes)
    ) {
      bytes += pending[count]!.delivery.rawBody.byteLength;
      count += 1;
    }
    const batch = pending.slice(0, count);
    pending = pending.slice(count);
    writing = write(batch).finally(() => {
      heldBytes -= bytes;
      writing = undefined;
      schedule();
    });
  };
  // Once the turn is over: what arrived in it is written together.
  const schedule = () => {
    if (scheduled || writing || pending.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  };

  const keep = (delivery: NewQuarantinedDelivery) => {
    if (heldBytes + delivery.rawBody.byteLength > BACKLOG_BYTES) return Promise.resolve(notKept(delivery, 'backlog_full'));
    heldBytes += delivery.rawBody.byteLength;
    return new Promise<boolean>((done) => {
      pending.push({ delivery, done });
      schedule();
    });
  };

  const compare = async (notification: NewCollectionNotification, rawBody: Uint8Array): Promise<DuplicateOutcome> => {
    const conflict: NewQuarantinedDelivery = {
      kind: 'CONFLICT',
      reason: 'conflicting_duplicate',
      detail: null,
      responseCode: '01',
      receivedAt: notification.receivedAt,
      sessionId: notification.sessionId,
      settlementId: notification.settlementId,
      accountNumber: notification.accountNumber,
      rawBody,
    };
    let stored: MoneyFields | null;
    try {
      stored = await deps.store.moneyOf(notification.settlementId);
    } catch (error) {
      // Whether it is a conflict cannot be told, so it cannot be answered 01: the bank sends it again.
      notKept(conflict, 'write_failed', error);
      return 'not-kept';
    }
    // Gone since (archived by hand): there is nothing left to conflict with.
    if (stored === null) return 'retry';
    const fields = moneyDifferences(stored, notification);
    if (fields.length === 0) return 'retry';
    logger.warn(
      { ...identify(conflict), fields },
      'collection notification: a duplicate with other money fields, answered 01; the stored notification stays the money record',
    );
    return (await keep({ ...conflict, detail: describeDifferences(fields, stored, notification) })) ? 'kept' : 'not-kept';
  };

  return {
    keep,
    checkDuplicate(notification, rawBody) {
      const check = compare(notification, rawBody);
      checks.add(check);
      void check.finally(() => checks.delete(check));
      return check;
    },
    async drain() {
      while (checks.size > 0 || writing || pending.length > 0) {
        await Promise.all(checks);
        flush();
        await writing;
      }
    },
  };
}

/** What a log line says of a delivery: never its body. */
function identify({ kind, reason, sessionId, settlementId }: NewQuarantinedDelivery) {
  return { quarantine: kind, reason, sessionId, settlementId };
}

/** Each field that differs, as sent and as stored: `transactionAmount 950000.00 (stored 1500.00)`. */
function describeDifferences(fields: readonly MoneyField[], stored: MoneyFields, given: MoneyFields): string {
  return fields.map((field) => `${field} ${given[field] ?? 'null'} (stored ${stored[field] ?? 'null'})`).join('; ');
}
