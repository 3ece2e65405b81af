// What the bench's two processes say to each other: the server side (scripts/bench.ts) hands a job
// to a load process (scripts/bench/load.ts), which answers with a result. Plain JSON over the IPC
// channel, so only data crosses, never functions.

/** The scenarios, in the order they run: each is one row of the table. */
export const SCENARIOS = ['webhook-00', 'webhook-01', 'query-banks', 'query-account', 'query-notifications', 'fanout'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** One scenario for one load process. */
export interface LoadJob {
  scenario: ScenarioName;
  /** The subgraph's origin, e.g. http://127.0.0.1:41234 (no path). */
  baseUrl: string;
  durationS: number;
  warmupS: number;
  connections: number;
  subscribers: number;
  events: number;
}

/** Milliseconds. */
export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** What the load side measured for one scenario. */
export interface LoadResult {
  scenario: ScenarioName;
  /** What drove it, e.g. "50 conn × 10 s" or "500 subs × 200 events". */
  load: string;
  /** Replies (HTTP) or deliveries (fan-out) counted. */
  count: number;
  seconds: number;
  perSecond: number;
  latencyMs: LatencySummary;
  non2xx: number;
  /**
   * Everything that is not the expected outcome: connection errors, time-outs, non-2xx, a wrong
   * reply code, a GraphQL error, a missed, duplicate or unexpected delivery.
   */
  errors: number;
  /** How often each outcome was seen, e.g. { '00': 51234 } or { ok: 9000, 'graphql UPSTREAM_UNAVAILABLE': 2 }. */
  outcomes: Record<string, number>;
  /** CPU the load process used while measuring, in cores: near 1, the generator itself was the limit. */
  loadCpuCores: number;
}

/** What a scenario's runner returns; the load process adds its own CPU use. */
export type ScenarioResult = Omit<LoadResult, 'loadCpuCores'>;

/** Load process → server side. */
export type ChildMessage =
  /** The warm-up is over: the server side starts its per-scenario measurements now. */
  | { type: 'measuring' }
  /** Fan-out: the subscribers are connected; answer once the server counts them live. */
  | { type: 'await-subscribers'; count: number }
  | { type: 'result'; result: LoadResult }
  | { type: 'failed'; message: string };

/** Server side → load process. */
export type ParentMessage =
  | { type: 'run'; job: LoadJob }
  | { type: 'subscribers-live'; live: boolean; active: number };

/** Adds `n` to `outcomes[key]`. */
export function tally(outcomes: Record<string, number>, key: string, n = 1): void {
  outcomes[key] = (outcomes[key] ?? 0) + n;
}
