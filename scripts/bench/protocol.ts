// What the bench's processes say to each other. The orchestrator (scripts/bench.ts) hands a job to a
// load process (scripts/bench/load.ts), which answers with a result; and it asks each server process
// (the project's, scripts/bench/app-host.ts, or a floor, scripts/bench/floors/*) for its measurements.
// Plain JSON over the IPC channels, so only data crosses, never functions.
import type { MemorySample, ServerSide } from './monitors.ts';

/** The load scenarios, in the order they run: each is one or more rows of the tables. */
export const SCENARIOS = ['webhook-00', 'webhook-01', 'query-banks', 'query-account', 'query-notifications', 'fanout'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];
/** What `--only` may name: a load scenario, the cold start, or the stalled resumes (scripts/bench/stalled-resumes.ts). */
export const SELECTABLE = [...SCENARIOS, 'cold-start', 'stalled-resumes'] as const;
export type Selectable = (typeof SELECTABLE)[number];
/** The growth mode's own scenarios (`--rows`), run by it alone: paging deep in an account, a resume, a summary. */
export const GROWTH_SCENARIOS = ['query-deep-page', 'resume', 'query-summary'] as const;
export type GrowthScenario = (typeof GROWTH_SCENARIOS)[number];
/** Every scenario a load process can run. */
export type LoadScenario = ScenarioName | GrowthScenario;

/** One scenario for one load process. */
export interface LoadJob {
  scenario: LoadScenario;
  /** The origin that takes the webhook posts and preparation, e.g. http://127.0.0.1:41234 (no path). */
  baseUrl: string;
  /** Every origin the load is spread over (replicas); HTTP load and subscribers go round-robin. */
  baseUrls: string[];
  durationS: number;
  warmupS: number;
  connections: number;
  subscribers: number;
  events: number;
  /** query-deep-page: the query sent again and again (it carries its cursor). */
  query?: string | undefined;
  /** resume: the cursor to resume after, and the settlementId of the last notification the replay must reach. */
  resume?: { after: string; lastSettlementId: string } | undefined;
  /** query-summary: the request (sent alike to ours and to its floor) and the count and sum the reply must carry. */
  summary?: { body: string; count: number; transactionAmount: string } | undefined;
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
  scenario: LoadScenario;
  /** What drove it, e.g. "100 conn × 5 s" or "1000 subs × 30 events". */
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

/** Load process → orchestrator. */
export type ChildMessage =
  /** The warm-up is over: the server side starts its per-scenario measurements now. */
  | { type: 'measuring' }
  /** Fan-out: the subscribers are connected; answer once the servers count them live. */
  | { type: 'await-subscribers'; count: number }
  | { type: 'result'; result: LoadResult }
  | { type: 'failed'; message: string };

/** Orchestrator → load process. */
export type ParentMessage =
  | { type: 'run'; job: LoadJob }
  | { type: 'subscribers-live'; live: boolean; active: number };

/** What the orchestrator may ask a server process, and what each answers. */
export interface HostCalls {
  /** Starts the per-scenario measurements afresh. */
  begin: null;
  /** Ends them: the server side of the scenario. */
  end: ServerSide;
  /** Memory after a forced GC (the process runs with --expose-gc). */
  memory: MemorySample;
  /** Subscriptions live in the process now. */
  subscriptions: number;
  /** Closes the server; the process exits after answering. */
  close: null;
}
export type HostCall = keyof HostCalls;

/** Orchestrator → server process. */
export interface HostRequest {
  id: number;
  call: HostCall;
}

/** Server process → orchestrator. */
export type HostMessage =
  | { type: 'listening'; baseUrl: string }
  | { type: 'reply'; id: number; value: unknown }
  | { type: 'reply'; id: number; error: string };

/** Adds `n` to `outcomes[key]`. */
export function tally(outcomes: Record<string, number>, key: string, n = 1): void {
  outcomes[key] = (outcomes[key] ?? 0) + n;
}
