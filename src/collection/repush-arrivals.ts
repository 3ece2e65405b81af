// What a REPUSH waits for once the bank has queued it: its delivery stored through the webhook, or
// refused there again (quarantined), within REPUSH_WAIT_MS. One watch serves every id of a call, so a
// list's waits run side by side: one store read a turn for all of them, woken by this replica's
// notification feed (a commit here, or another replica's commit read) and polled briefly besides,
// since a refusal moves no feed and another replica's commit may reach this one late.
import { setTimeout as sleep } from 'node:timers/promises';
import { withinDeadline } from '../async/deadline.ts';
import type { QuarantinedDeliveryRecord } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { CollectionStore } from '../store/types.ts';
import type { NotificationFeed } from './notification-feed.ts';

/** How long a repushed notification is waited for, from the bank's queued answer. */
export const REPUSH_WAIT_MS = 10_000;
/** The longest a watch goes without reading: what a missed wake-up, or a refusal, costs. */
const POLL_MS = 200;
/** The shortest time between two reads while commits keep waking it. */
const MIN_READ_INTERVAL_MS = 20;
/** Refusals read a turn, newest first: those of the waited ids since they were asked for. */
const QUARANTINE_READ_LIMIT = 100;

/** What became of a repushed notification. */
export type Arrival =
  | { outcome: 'stored' }
  /** Refused by the webhook again: `refusal` is its newest quarantined delivery. */
  | { outcome: 'quarantined'; refusal: QuarantinedDeliveryRecord }
  /** Not stored in time; `unreadable` when the store's last read failed. */
  | { outcome: 'not-arrived'; unreadable: boolean };

/** The transfer waited for, and where its quarantined deliveries stood when the bank was asked. */
export interface AwaitedTransfer {
  settlementId: string;
  sessionId: string;
  /** Its quarantined deliveries before op 17: only a later one is a refusal of the repushed delivery. */
  quarantinedBefore: readonly QuarantinedDeliveryRecord[];
}

export interface ArrivalWatch {
  /** Resolves once the transfer is stored, refused again, or REPUSH_WAIT_MS have passed; never rejects. */
  wait(transfer: AwaitedTransfer): Promise<Arrival>;
}

export interface ArrivalWatchDeps {
  store: Pick<CollectionStore, 'getMany' | 'quarantine'>;
  notificationFeed: Pick<NotificationFeed, 'onAdvance'>;
  logger: Logger;
}

interface Waiter {
  settlementId: string;
  sessionId: string;
  /** The id of its newest quarantined delivery before op 17 (ids grow with each delivery), -1 when none. */
  before: bigint;
  deadline: number;
  done(arrival: Arrival): void;
}

/** A watch for one operation's repushed notifications; it reads only while someone waits. */
export function createArrivalWatch(deps: ArrivalWatchDeps, waitMs = REPUSH_WAIT_MS): ArrivalWatch {
  const waiters = new Set<Waiter>();
  let running = false;
  let unreadable = false;

  const settle = (waiter: Waiter, arrival: Arrival) => {
    waiters.delete(waiter);
    waiter.done(arrival);
  };

  async function look(): Promise<void> {
    const waiting = [...waiters];
    try {
      const stored = await deps.store.getMany(waiting.map((waiter) => waiter.settlementId));
      waiting.forEach((waiter, index) => {
        if (stored[index]) settle(waiter, { outcome: 'stored' });
      });
      if (waiters.size === 0) return;
      const refused = await deps.store.quarantine.withTransferIds({
        settlementIds: [...waiters].map((waiter) => waiter.settlementId),
        sessionIds: [...waiters].map((waiter) => waiter.sessionId).filter((id) => id !== ''),
        limit: QUARANTINE_READ_LIMIT,
      });
      for (const waiter of [...waiters]) {
        const refusal = refused.find((delivery) => isRefusalOf(delivery, waiter));
        if (refusal) settle(waiter, { outcome: 'quarantined', refusal });
      }
      unreadable = false;
    } catch (error) {
      if (!unreadable) deps.logger.warn({ err: error }, 'reconciliation: could not read whether repushed transfers arrived; retrying');
      unreadable = true;
    }
  }

  async function run(): Promise<void> {
    let wake = Promise.withResolvers<void>();
    const stopListening = deps.notificationFeed.onAdvance(() => wake.resolve());
    try {
      while (waiters.size > 0) {
        // Armed before the read: a commit during it is a reason to read again.
        wake = Promise.withResolvers<void>();
        const readAt = Date.now();
        await look();
        for (const waiter of [...waiters]) if (waiter.deadline <= Date.now()) settle(waiter, { outcome: 'not-arrived', unreadable });
        if (waiters.size === 0) break;
        const nearest = Math.min(...[...waiters].map((waiter) => waiter.deadline));
        await withinDeadline(wake.promise, Math.max(0, Math.min(POLL_MS, nearest - Date.now())), undefined);
        const early = readAt + MIN_READ_INTERVAL_MS - Date.now();
        if (early > 0) await sleep(early);
      }
    } finally {
      stopListening();
      running = false;
    }
  }

  return {
    wait({ settlementId, sessionId, quarantinedBefore }) {
      const { promise, resolve } = Promise.withResolvers<Arrival>();
      const before = quarantinedBefore.reduce((newest, delivery) => (BigInt(delivery.id) > newest ? BigInt(delivery.id) : newest), -1n);
      waiters.add({ settlementId, sessionId: sessionId.trim(), before, deadline: Date.now() + waitMs, done: resolve });
      if (!running) {
        running = true;
        void run();
      }
      return promise;
    },
  };
}

/** Whether `delivery` is a refusal of `waiter`'s transfer since the bank was asked to send it again. */
function isRefusalOf(delivery: QuarantinedDeliveryRecord, waiter: Waiter): boolean {
  const ofIt = delivery.settlementId === waiter.settlementId || (waiter.sessionId !== '' && delivery.sessionId === waiter.sessionId);
  return ofIt && BigInt(delivery.id) > waiter.before;
}
