import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The store's size as its metrics show it (NotificationStore.size's answer). */
export interface StoreSizeReading {
  bytes: number;
  approximateRows: number;
}

/** A scrape reuses a size measured this recently: several scrapers (HA Prometheus) cost one query. */
const STORE_SIZE_TTL_MS = 10_000;
/** A scrape waits this long for a measurement, then shows the last one: a slow store never stalls /metrics. */
const STORE_SIZE_WAIT_MS = 1_000;

/** Seconds; from a fast cache hit to the bank's full time-out budget. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The subgraph's Prometheus metrics on their own registry, so several apps can live in one process
 * (tests) without clashing. Labels never carry a secret, an account number or a URL.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let readinessProbe: (() => Promise<boolean>) | undefined;
  const storeSize = createSizeCache();
  return {
    registry,
    httpRequestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests served, by route and status code.',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    graphqlOperations: new Counter({
      name: 'graphql_operations_total',
      help: 'GraphQL operations executed, by type and outcome (ok or the first error code).',
      labelNames: ['operation_type', 'outcome'] as const,
      registers: [registry],
    }),
    upstreamRequestDuration: new Histogram({
      name: 'bank_upstream_request_duration_seconds',
      help: 'Calls to the bank, by area, operation and outcome (ok or the contract error code).',
      labelNames: ['area', 'operation', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    bankRetries: new Counter({
      name: 'bank_upstream_retries_total',
      help: 'Transient failures of idempotent bank reads, by area, operation and decision: retried, or not for want of budget (retry budget of the area), deadline (BANK_TIMEOUT_MS) or attempts.',
      labelNames: ['area', 'operation', 'decision'] as const,
      registers: [registry],
    }),
    bankSharedReads: new Counter({
      name: 'bank_shared_reads_total',
      help: 'Bank reads answered by joining an identical call already in flight, instead of a call of their own, by area and operation.',
      labelNames: ['area', 'operation'] as const,
      registers: [registry],
    }),
    bankListRefreshes: new Counter({
      name: 'bank_list_refreshes_total',
      help: 'Bank-list fetches from the bank (cache misses), by outcome.',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    webhookReplies: new Counter({
      name: 'collection_webhook_replies_total',
      help: 'Collection webhook replies, by responseCode (00 accepted, 01 duplicate, 02 rejected, 03 failure) and reason.',
      labelNames: ['response_code', 'reason'] as const,
      registers: [registry],
    }),
    webhookStoreDuration: new Histogram({
      name: 'collection_store_write_duration_seconds',
      help: 'Time to durably store a collection notification, by outcome.',
      labelNames: ['outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    storeBatchSize: new Histogram({
      name: 'collection_store_batch_size',
      help: 'Notifications written per store transaction (group commit), by outcome (committed, rolled-back: all duplicates, failed).',
      labelNames: ['outcome'] as const,
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
      registers: [registry],
    }),
    activeSubscriptions: new Gauge({
      name: 'graphql_active_subscriptions',
      help: 'incomingTransfer subscriptions currently open on this replica, one per subscriber (shared executions included).',
      registers: [registry],
    }),
    deliveredEvents: new Counter({
      name: 'graphql_subscription_events_total',
      help: 'Notifications delivered to subscribers, one per subscriber reached, by source (replay or live).',
      labelNames: ['source'] as const,
      registers: [registry],
    }),
    subscriptionExecutions: new Counter({
      name: 'graphql_subscription_executions_total',
      help: 'Subscription results executed, by execution: shared (one for all subscribers of the same operation and variables) or individual.',
      labelNames: ['execution'] as const,
      registers: [registry],
    }),
    logPosition: new Gauge({
      name: 'collection_log_position',
      help: 'The highest notification position (seq) this replica has read from the store and handed to its subscribers.',
      registers: [registry],
    }),
    logReads: new Counter({
      name: 'collection_log_reads_total',
      help: 'Store reads of new notifications by this replica, by trigger (wake: a pub/sub message; timer: the safety net) and outcome (ok, error).',
      labelNames: ['trigger', 'outcome'] as const,
      registers: [registry],
    }),
    subscriptionsEndedEarly: new Counter({
      name: 'graphql_subscriptions_ended_early_total',
      help: 'incomingTransfer subscriptions this replica completed early (the subscriber fell too far behind), and WebSockets it closed with 1013 for the same reason (one each); clients resume with after.',
      registers: [registry],
    }),
    bankCircuitOpen: new Gauge({
      name: 'bank_circuit_open',
      help: 'Circuit breaker of each bank area: 0 closed, 0.5 half-open (one trial call), 1 open (failing fast).',
      labelNames: ['area'] as const,
      registers: [registry],
    }),
    ready: new Gauge({
      name: 'bank_subgraph_ready',
      help: '1 when this replica should get traffic (what /health/ready answers), 0 otherwise; probed afresh at each scrape.',
      registers: [registry],
      // Prometheus reads /metrics, not /health/ready: a value from the last probe could be hours old.
      async collect() {
        if (readinessProbe) this.set((await readinessProbe()) ? 1 : 0);
      },
    }),
    storeBytes: new Gauge({
      name: 'collection_store_bytes',
      help: 'Bytes the stored notifications take in the store: on PostgreSQL the table with its indexes and TOAST, on SQLite the database file. Read at scrape time (at most every 10 s) from the database\'s own bookkeeping.',
      registers: [registry],
      async collect() {
        const size = await storeSize.read();
        if (size) this.set(size.bytes);
      },
    }),
    storeNotifications: new Gauge({
      name: 'collection_store_notifications',
      help: 'Notifications stored, estimated without counting rows (PostgreSQL: the planner\'s estimate; SQLite: the span of positions). Read with collection_store_bytes.',
      registers: [registry],
      async collect() {
        const size = await storeSize.read();
        if (size) this.set(size.approximateRows);
      },
    }),
    /** Sets how the store's size is measured for `collection_store_bytes` and `collection_store_notifications`. */
    measureStoreWith(measure: () => Promise<StoreSizeReading>): void {
      storeSize.measureWith(measure);
    },
    /** Sets the check `bank_subgraph_ready` runs at each scrape (the health routes own it). */
    probeReadinessWith(probe: () => Promise<boolean>): void {
      readinessProbe = probe;
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * The last store size measured, for the scrapes: measured afresh once it is older than the TTL, one
 * measurement at a time; a scrape waits for it up to STORE_SIZE_WAIT_MS and otherwise (or when it
 * fails) shows the last value, since a store's size does not change while it cannot be reached.
 */
function createSizeCache() {
  let measure: (() => Promise<StoreSizeReading>) | undefined;
  let last: { at: number; size: StoreSizeReading } | undefined;
  let inFlight: Promise<void> | undefined;
  const refresh = (from: () => Promise<StoreSizeReading>) =>
    (inFlight ??= from()
      .then((size) => void (last = { at: Date.now(), size }), () => undefined)
      .finally(() => (inFlight = undefined)));
  return {
    measureWith(next: () => Promise<StoreSizeReading>): void {
      measure = next;
    },
    async read(): Promise<StoreSizeReading | undefined> {
      if (measure && (!last || Date.now() - last.at >= STORE_SIZE_TTL_MS)) {
        let timer: NodeJS.Timeout | undefined;
        const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, STORE_SIZE_WAIT_MS)));
        await Promise.race([refresh(measure), waited]);
        clearTimeout(timer);
      }
      return last?.size;
    },
  };
}
