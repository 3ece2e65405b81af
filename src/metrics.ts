import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { REFUSAL_REASONS } from './auth/caller.ts';

/** The outcomes of a confirmation with the bank, as `collection_confirmations_total` labels them. */
export const CONFIRMATION_OUTCOMES = ['CONFIRMED', 'MISMATCHED', 'NOT_AT_BANK'] as const;
/** Why an ask of the bank came to no answer: an upstream error code, or INTERNAL for a fault of ours. */
export const CONFIRMATION_FAILURE_CODES = [
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_INVALID_RESPONSE',
  'UPSTREAM_UNAUTHORIZED',
  'UPSTREAM_BAD_REQUEST',
  'UPSTREAM_REJECTED',
  'INTERNAL',
] as const;

/** Seconds; from a fast cache hit to the bank's full time-out budget. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The subgraph's Prometheus metrics on their own registry, so several apps can live in one process
 * (tests) without clashing. Labels never carry a secret, an account number or a URL.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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
      help: 'Refreshes of a cached reference list from the bank (cache misses), by list (banks, billCategories) and outcome: ok, stale (failed; the last good copy served) or error (failed; the error stands).',
      labelNames: ['list', 'outcome'] as const,
      registers: [registry],
    }),
    responseCache: counterFromZero(
      new Counter({
        name: 'graphql_response_cache_total',
        help: 'Queries whose whole response is public reference data the response cache keeps, by outcome: hit (answered from the cache) or miss (executed, then kept).',
        labelNames: ['outcome'] as const,
        registers: [registry],
      }),
      { outcome: ['hit', 'miss'] },
    ),
    webhookReplies: new Counter({
      name: 'collection_webhook_replies_total',
      help: 'Collection webhook replies, by responseCode (00 accepted, 01 duplicate, 02 rejected, 03 failure) and reason.',
      labelNames: ['response_code', 'reason'] as const,
      registers: [registry],
    }),
    webhookSignatureMatches: new Counter({
      name: 'collection_webhook_signature_matches_total',
      help: 'Webhook deliveries whose signature matched, by secret: current (WEBHOOK_CLIENT_SECRET) or previous (WEBHOOK_CLIENT_SECRET_PREVIOUS, during a rotation).',
      labelNames: ['secret'] as const,
      registers: [registry],
    }),
    webhookQuarantined: new Counter({
      name: 'collection_webhook_quarantined_total',
      help: 'Webhook deliveries kept in the quarantine, by kind (REJECTED: refused for their content; CONFLICT: a stored settlementId with other money fields; UNSTORABLE: refused by the store) and reason.',
      labelNames: ['kind', 'reason'] as const,
      registers: [registry],
    }),
    quarantineNotKept: counterFromZero(
      new Counter({
        name: 'collection_quarantine_not_kept_total',
        help: 'Webhook deliveries the quarantine should have kept and did not, each answered 03 (the bank sends it again), by kind and cause: over_limit (QUARANTINE_MAX_ROWS await review), over_bytes (QUARANTINE_MAX_BYTES of bodies await review), write_failed (the store failed), backlog_full (writes fell too far behind).',
        labelNames: ['kind', 'cause'] as const,
        registers: [registry],
      }),
      { kind: ['REJECTED', 'CONFLICT', 'UNSTORABLE'], cause: ['over_limit', 'over_bytes', 'write_failed', 'backlog_full'] },
    ),
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
    callbackSubscriptions: new Gauge({
      name: 'graphql_callback_subscriptions',
      help: "Subscriptions over the router's callback protocol this replica holds, from the moment one is admitted (before its check) until it ends, however it ends.",
      registers: [registry],
    }),
    subscriptionEvents: new Counter({
      name: 'graphql_subscription_events_total',
      help: 'Notifications handed to incomingTransfer subscribers as events, one per subscriber reached, by source (replay or live).',
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
      help: 'The seq of the last notification this replica has read up to in the store log and handed to its subscribers; replicas that have read as far show the same.',
      registers: [registry],
    }),
    logReads: new Counter({
      name: 'collection_log_reads_total',
      help: 'Store reads of new notifications by this replica, by trigger (wake: a pub/sub message; timer: the safety net; retry: a read that stopped short of a committed notification not yet settled) and outcome (ok, error).',
      labelNames: ['trigger', 'outcome'] as const,
      registers: [registry],
    }),
    subscriptionsEndedEarly: new Counter({
      name: 'graphql_subscriptions_ended_early_total',
      help: 'incomingTransfer subscribers this replica ended for falling too far behind (more than 1,000 notifications waiting) or for answering no keep-alive ping: WebSockets closed with 1013 or cut, one each, and callback subscriptions completed; clients resume with after.',
      registers: [registry],
    }),
    notificationsWaiting: new Gauge({
      name: 'graphql_subscription_notifications_waiting',
      help: 'Notifications read or handed to incomingTransfer subscribers on this replica that their connections have not taken yet; more than 1,000 for one subscriber ends it.',
      registers: [registry],
    }),
    authorizationRefusals: counterFromZero(
      new Counter({
        name: 'graphql_authorization_refusals_total',
        help: 'Refusals of what a caller asked for, by reason: no_token, a reason the token failed (expired, bad_signature, wrong_issuer, …), missing_scope, forbidden_account, callback_url_refused.',
        labelNames: ['reason'] as const,
        registers: [registry],
      }),
      { reason: REFUSAL_REASONS },
    ),
    confirmations: counterFromZero(
      new Counter({
        name: 'collection_confirmations_total',
        help: "Stored notifications decided by the bank's collection service (op 16), by outcome: CONFIRMED (it holds them with the same values), MISMATCHED (with other values), NOT_AT_BANK (it does not know them: forged, or sent by mistake). Counted by the replica that recorded the outcome, once per notification.",
        labelNames: ['outcome'] as const,
        registers: [registry],
      }),
      { outcome: CONFIRMATION_OUTCOMES },
    ),
    confirmationFailures: counterFromZero(
      new Counter({
        name: 'collection_confirmation_failures_total',
        help: "Asks of the bank's collection service that came to no answer, by the contract's error code (INTERNAL: a fault of ours); the notification stays PENDING and is asked again: after its own backoff (30 s doubling to 15 min) where the failure was about that transfer, after a pause of the confirmer (at most 30 s) where the bank itself could not answer.",
        labelNames: ['code'] as const,
        registers: [registry],
      }),
      { code: CONFIRMATION_FAILURE_CODES },
    ),
    confirmationDecisions: counterFromZero(
      new Counter({
        name: 'collection_confirmation_decisions_total',
        help: "Operators' decisions of a notification's confirmation (decideConfirmation), by decision: CONFIRMED or NOT_AT_BANK by hand, RECHECK (the bank asked again). Each is logged at warn level with who, what and why.",
        labelNames: ['decision'] as const,
        registers: [registry],
      }),
      { decision: ['CONFIRMED', 'NOT_AT_BANK', 'RECHECK'] },
    ),
    confirmationSeconds: new Histogram({
      name: 'collection_confirmation_seconds',
      help: "From a notification's arrival to the bank's answer recorded on it, by outcome.",
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600],
      registers: [registry],
    }),
    bankCircuitOpen: new Gauge({
      name: 'bank_circuit_open',
      help: 'Circuit breaker of each bank area: 0 closed, 0.5 half-open (one trial call), 1 open (failing fast).',
      labelNames: ['area'] as const,
      registers: [registry],
    }),
    reconciliationChecks: counterFromZero(
      new Counter({
        name: 'collection_reconciliation_checks_total',
        help: 'Transfers checked with the bank on demand (bankTransaction, reconcileCollections), by verdict; FAILED: the bank could not be asked.',
        labelNames: ['verdict'] as const,
        registers: [registry],
      }),
      { verdict: ['MATCHED', 'MISSING_HERE', 'MISMATCHED', 'NOT_AT_BANK', 'UNKNOWN', 'FAILED'] },
    ),
    reconciliationRecoveries: counterFromZero(
      new Counter({
        name: 'collection_reconciliation_recoveries_total',
        help: 'Transfers the bank holds and the store did not, recovered by reconcileCollections, by mode (REPUSH, IMPORT) and outcome (recovered, not_recovered).',
        labelNames: ['mode', 'outcome'] as const,
        registers: [registry],
      }),
      { mode: ['REPUSH', 'IMPORT'], outcome: ['recovered', 'not_recovered'] },
    ),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** `counter` exported at 0 for every combination of these label values, so a first count is an increase in PromQL. */
function counterFromZero<L extends string>(counter: Counter<L>, values: Record<L, readonly string[]>): Counter<L> {
  let combinations: Partial<Record<L, string>>[] = [{}];
  for (const [label, options] of Object.entries(values) as [L, readonly string[]][]) {
    combinations = combinations.flatMap((labels) => options.map((value) => ({ ...labels, [label]: value })));
  }
  for (const labels of combinations) counter.inc(labels, 0);
  return counter;
}
