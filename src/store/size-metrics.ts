import { Gauge, type Registry } from 'prom-client';
import type { NotificationStore, StoreSize } from './types.ts';

/** A scrape reuses a size measured this recently: several scrapers (HA Prometheus) cost one query. */
const SIZE_TTL_MS = 10_000;
/** A scrape waits this long for a measurement, then shows the last one: a slow store never stalls /metrics. */
const SIZE_WAIT_MS = 1_000;

/**
 * Exports the store's size on `registry` as `collection_store_bytes` and
 * `collection_store_notifications`, measured at scrape time (never on the webhook's path).
 */
export function exportStoreSize(registry: Registry, store: Pick<NotificationStore, 'size'>): void {
  const sizes = createSizeCache(() => store.size());
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
 * The last size measured: measured afresh once it is older than the TTL, one measurement at a time;
 * a scrape waits for it up to SIZE_WAIT_MS and otherwise (or when it fails) shows the last value,
 * since a store's size does not change while it cannot be reached.
 */
function createSizeCache(measure: () => Promise<StoreSize>) {
  let last: { at: number; size: StoreSize } | undefined;
  let inFlight: Promise<void> | undefined;
  const refresh = () =>
    (inFlight ??= measure()
      .then((size) => void (last = { at: Date.now(), size }), () => undefined)
      .finally(() => (inFlight = undefined)));
  return {
    async read(): Promise<StoreSize | undefined> {
      if (!last || Date.now() - last.at >= SIZE_TTL_MS) {
        let timer: NodeJS.Timeout | undefined;
        const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, SIZE_WAIT_MS)));
        await Promise.race([refresh(), waited]);
        clearTimeout(timer);
      }
      return last?.size;
    },
  };
}
