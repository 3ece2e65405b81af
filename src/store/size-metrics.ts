import { Gauge, type Registry } from 'prom-client';
import { withinDeadline } from '../async/deadline.ts';
import { singleFlight } from '../async/single-flight.ts';
import type { ConfirmationQueue, NotificationStore, QuarantineStore } from './types.ts';

/** A scrape reuses a size measured this recently: several scrapers (HA Prometheus) cost one query. */
const SIZE_TTL_MS = 10_000;
/** The quarantine's count is one index read: fresh enough that a review shows at the next scrape. */
const UNREVIEWED_TTL_MS = 1_000;
/** A scrape waits this long for a measurement, then shows the last one: a slow store never stalls /metrics. */
const SCRAPE_WAIT_MS = 1_000;

/**
 * Exports the store's size on `registry` as `collection_store_bytes` and
 * `collection_store_notifications`, measured at scrape time (never on the webhook's path).
 */
export function exportStoreSize(registry: Registry, store: Pick<NotificationStore, 'size'>): void {
  const sizes = lastMeasured(() => store.size(), SIZE_TTL_MS);
  new Gauge({
    name: 'collection_store_bytes',
    help: "Bytes the stored notifications take in the store: on PostgreSQL the table with its indexes and TOAST, on SQLite the database file. Read at scrape time (at most every 10 s) from the database's own bookkeeping.",
    registers: [registry],
    async collect() {
      const size = await sizes.read();
      if (size) this.set(size.bytes);
    },
  });
  new Gauge({
    name: 'collection_store_notifications',
    help: "Notifications stored, estimated without counting rows (PostgreSQL: the planner's estimate; SQLite: the span of positions). Read with collection_store_bytes.",
    registers: [registry],
    async collect() {
      const size = await sizes.read();
      if (size) this.set(size.approximateRows);
    },
  });
}

/**
 * Exports `collection_quarantine_unreviewed`: the quarantined deliveries awaiting review, counted in
 * the store (an index of them alone) at scrape time, so every replica, and a restarted one, shows
 * the same number.
 */
export function exportQuarantineUnreviewed(registry: Registry, quarantine: Pick<QuarantineStore, 'countUnreviewed'>): void {
  const unreviewed = lastMeasured(() => quarantine.countUnreviewed(), UNREVIEWED_TTL_MS);
  new Gauge({
    name: 'collection_quarantine_unreviewed',
    help: 'Webhook deliveries in the quarantine awaiting review (refused for their content, conflicting duplicates, refused by the store), read from the store at scrape time: the same on every replica.',
    registers: [registry],
    async collect() {
      const count = await unreviewed.read();
      if (count !== undefined) this.set(count);
    },
  });
}

/**
 * Exports what waits for the bank's answer, read from the store at scrape time (the index of PENDING
 * notifications alone), so every replica, and a restarted one, shows the same:
 * `collection_confirmations_pending` and `collection_confirmation_oldest_pending_seconds`.
 */
export function exportConfirmationBacklog(
  registry: Registry,
  confirmations: Pick<ConfirmationQueue, 'countPending' | 'oldestPending'>,
): void {
  const backlog = lastMeasured(
    async () => ({ count: await confirmations.countPending(), oldest: await confirmations.oldestPending() }),
    UNREVIEWED_TTL_MS,
  );
  new Gauge({
    name: 'collection_confirmations_pending',
    help: "Stored notifications waiting for the bank's collection service to confirm them (PENDING), read from the store at scrape time: the same on every replica.",
    registers: [registry],
    async collect() {
      const read = await backlog.read();
      if (read) this.set(read.count);
    },
  });
  new Gauge({
    name: 'collection_confirmation_oldest_pending_seconds',
    help: 'How long ago the oldest PENDING notification arrived; 0 when none waits. Read from the store at scrape time.',
    registers: [registry],
    async collect() {
      const read = await backlog.read();
      if (read) this.set(read.oldest === null ? 0 : Math.max(0, (Date.now() - Date.parse(read.oldest)) / 1000));
    },
  });
}

/**
 * The last value measured: measured afresh once it is older than `ttlMs`, one measurement at a
 * time; a scrape waits for it up to SCRAPE_WAIT_MS and otherwise (or when it fails) shows the last
 * value, since what a store holds does not change while it cannot be reached.
 */
function lastMeasured<T>(measure: () => Promise<T>, ttlMs: number) {
  let last: { at: number; value: T } | undefined;
  const refresh = singleFlight(() =>
    measure().then(
      (value) => void (last = { at: Date.now(), value }),
      () => undefined,
    ),
  );
  return {
    async read(): Promise<T | undefined> {
      if (!last || Date.now() - last.at >= ttlMs) await withinDeadline(refresh(), SCRAPE_WAIT_MS, undefined);
      return last?.value;
    },
  };
}
