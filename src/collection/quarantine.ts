// Keeping what the webhook refuses, or takes for a conflict, in the store's quarantine: always after
// the reply has gone, never holding a 00 or changing a reply. A write that fails, or finds the
// quarantine full, is counted and logged, and the bank's reply stands.
import { moneyDifferences, type MoneyField, type MoneyFields, type NewCollectionNotification, type NewQuarantinedDelivery } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { CollectionStore } from '../store/types.ts';

/** What the keeper takes: the store, its bound, and where it counts and logs. */
export interface QuarantineKeeperDeps {
  store: Pick<CollectionStore, 'moneyOf' | 'quarantine'>;
  /** `QUARANTINE_MAX_ROWS`. */
  maxUnreviewed: number;
  metrics: Metrics;
  logger: Logger;
}

export interface QuarantineKeeper {
  /** Keeps a delivery, written soon after (with others that came meanwhile); never waits, never throws. */
  keep(delivery: NewQuarantinedDelivery): void;
  /**
   * Compares a duplicate (answered 01) with the notification stored under its settlementId, and
   * keeps it as a CONFLICT when their money differs; an honest retry is not kept.
   */
  checkDuplicate(notification: NewCollectionNotification, rawBody: Uint8Array): void;
  /** Resolves once everything handed over so far is written, or given up and counted. */
  drain(): Promise<void>;
}

/**
 * Bodies held, waiting or being written, at most: past this (the store far slower than the
 * refusals), a delivery is counted and logged instead of held. Each body is at most 1 MiB.
 */
const BACKLOG_BYTES = 64 * 1024 * 1024;
/** Deliveries written together (one transaction, one fsync), at most this many and these bytes of bodies. */
const BATCH = { deliveries: 100, bytes: 16 * 1024 * 1024 };

/** Makes the keeper; writes go one batch at a time, so refusals never take more than one connection. */
export function createQuarantineKeeper(deps: QuarantineKeeperDeps): QuarantineKeeper {
  const { metrics, logger } = deps;
  let pending: NewQuarantinedDelivery[] = [];
  /** Bytes of the bodies held: waiting, and in the batch being written. */
  let heldBytes = 0;
  let writing: Promise<void> | undefined;
  let scheduled = false;
  const checks = new Set<Promise<void>>();

  const notKept = (delivery: NewQuarantinedDelivery, cause: 'over_limit' | 'write_failed' | 'backlog_full', err?: unknown) => {
    metrics.quarantineNotKept.inc({ kind: delivery.kind, cause });
    logger[cause === 'over_limit' ? 'warn' : 'error'](
      { ...identify(delivery), cause, ...(err === undefined ? {} : { err }) },
      cause === 'over_limit'
        ? 'collection notification not kept in the quarantine: QUARANTINE_MAX_ROWS deliveries await review'
        : 'collection notification not kept in the quarantine: the write failed; the reply to the bank stands',
    );
  };

  const write = async (batch: NewQuarantinedDelivery[]) => {
    let kept: number;
    try {
      kept = await deps.store.quarantine.keep(batch, deps.maxUnreviewed);
    } catch (error) {
      for (const delivery of batch) notKept(delivery, 'write_failed', error);
      return;
    }
    batch.forEach((delivery, index) => {
      if (index >= kept) return notKept(delivery, 'over_limit');
      metrics.webhookQuarantined.inc({ kind: delivery.kind, reason: delivery.reason });
      logger.info(identify(delivery), 'collection notification kept in the quarantine');
    });
  };

  const flush = () => {
    scheduled = false;
    if (writing || pending.length === 0) return;
    let [count, bytes] = [0, 0];
    // Always one, however large; then as many as the batch's bounds allow.
    while (count < pending.length && count < BATCH.deliveries && (count === 0 || bytes + pending[count]!.rawBody.byteLength <= BATCH.bytes)) {
      bytes += pending[count]!.rawBody.byteLength;
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
  // After the turn that sent the replies: nothing here runs before them.
  const schedule = () => {
    if (scheduled || writing || pending.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  };

  const keeper: QuarantineKeeper = {
    keep(delivery) {
      if (heldBytes + delivery.rawBody.byteLength > BACKLOG_BYTES) return notKept(delivery, 'backlog_full');
      pending.push(delivery);
      heldBytes += delivery.rawBody.byteLength;
      schedule();
    },
    checkDuplicate(notification, rawBody) {
      const check = compare(notification, rawBody).finally(() => checks.delete(check));
      checks.add(check);
    },
    async drain() {
      while (checks.size > 0 || writing || pending.length > 0) {
        await Promise.all(checks);
        flush();
        await writing;
      }
    },
  };

  const compare = async (notification: NewCollectionNotification, rawBody: Uint8Array) => {
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
      // Whether it was a conflict cannot be told: what was kept of it is nothing.
      return notKept(conflict, 'write_failed', error);
    }
    // Gone since (archived by hand): there is nothing left to conflict with.
    if (stored === null) return;
    const fields = moneyDifferences(stored, notification);
    if (fields.length === 0) return;
    logger.warn(
      { ...identify(conflict), fields },
      'collection notification: a duplicate with other money fields, answered 01; the stored notification stays the money record',
    );
    keeper.keep({ ...conflict, detail: describeDifferences(fields, stored, notification) });
  };

  return keeper;
}

/** What a log line says of a delivery: never its body. */
function identify({ kind, reason, sessionId, settlementId }: NewQuarantinedDelivery) {
  return { quarantine: kind, reason, sessionId, settlementId };
}

/** Each field that differs, as sent and as stored: `transactionAmount 950000.00 (stored 1500.00)`. */
function describeDifferences(fields: readonly MoneyField[], stored: MoneyFields, given: MoneyFields): string {
  return fields.map((field) => `${field} ${given[field] ?? 'null'} (stored ${stored[field] ?? 'null'})`).join('; ');
}
