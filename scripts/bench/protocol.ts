// What the bench's processes say to each other over IPC, as plain JSON: the orchestrator
// (scripts/bench.ts) hands a job to a load process (load.ts) and asks each server process
// (app-host.ts, floors/) for its own figures (host.ts).

/** MiB. */
export type MemorySample = Record<'rss' | 'heapUsed', number>;

/** The server process during one job. */
export interface ServerSide {
  /** How late the event loop ran a timer, ms: a stall shows here. */
  loopDelayMs: { p99: number; max: number };
  /** Share of the time the event loop was busy, 0 to 1. */
  loopUtilization: number;
  /** Cores used; well below loopUtilization, other processes had the CPU. */
  cpuCores: number;
  /** Highest memory sampled (every 100 ms). */
  peak: MemorySample;
}

/** The scenarios measured against a floor, in the order they run. */
export const SCENARIOS = ['webhook-00', 'webhook-01', 'webhook-02', 'query-banks', 'query-banks-600', 'query-account', 'fanout'] as const;
/** How many banks `query-banks-600` lists: as many as NIP's real list, several hundred. */
export const LONG_LIST = 600;
/** `banks`: on the sandbox's list, and on the long list (bank-list.ts). */
export const BANKS_SCENARIOS: readonly ScenarioName[] = ['query-banks', 'query-banks-600'];
export type ScenarioName = (typeof SCENARIOS)[number];
/**
 * What `--only` may name: those, the webhook under a read storm, beside the worst raw-body read, and
 * confirmation with the bank (ours alone).
 */
export const SELECTABLE = [...SCENARIOS, 'read-storm', 'raw-bodies', 'confirmation'] as const;
export type Selectable = (typeof SELECTABLE)[number];

/** One job for one load process. */
export interface LoadJob {
  /** The scenarios, and the jobs the read storm and the growth mode add. */
  scenario: ScenarioName | 'fill' | 'query' | 'resume' | 'storm-reads' | 'raw-reads' | 'confirmed-latency';
  /** The origin that takes webhook posts, e.g. http://127.0.0.1:41234. */
  baseUrl: string;
  /** Every origin the load is spread over (replicas). */
  baseUrls: string[];
  durationS: number;
  warmupS: number;
  connections: number;
  subscribers: number;
  events: number;
  /** Sent with every GraphQL request (an Authorization header, say). */
  headers?: Record<string, string> | undefined;
  /** webhook-00, confirmed-latency: deliveries per second in all, instead of as fast as the server answers. */
  rate?: number | undefined;
  /** fill: notifications `first` to `first + count - 1` (bank.ts fillBody), each answered 00. */
  fill?: { first: number; count: number; startMs: number; stepMs: number } | undefined;
  /** query: the request body, and a path into its data that must hold `equals`. */
  query?: { body: string; path: string; equals: unknown } | undefined;
  /** resume: the cursor to resume after, and the notification that ends the replay. */
  resume?: { after: string; lastSettlementId: string } | undefined;
  /** storm-reads: readers of the summary over [from, to). */
  storm?: { clients: number; from: string; to: string } | undefined;
  /** raw-reads: readers of `query`, each answer holding `bodies` raw bodies. */
  rawReads?: { clients: number; query: string; bodies: number } | undefined;
}

/** Milliseconds. */
export type LatencySummary = Record<'p50' | 'p90' | 'p99' | 'max', number>;

/** What the load side measured for one job. */
export interface LoadResult {
  scenario: LoadJob['scenario'];
  /** What drove it, e.g. "100 conn × 5 s" or "1000 subs × 30 events". */
  load: string;
  /** Replies, or deliveries for the fan-out. */
  count: number;
  seconds: number;
  perSecond: number;
  latencyMs: LatencySummary;
  /** Every outcome but the expected one: a wrong reply code, a GraphQL error, a missed delivery… */
  errors: number;
  /** How often each outcome was seen, e.g. { '00': 51234 }. */
  outcomes: Record<string, number>;
  /** Cores the load process used: near 1, the generator itself was the limit. */
  loadCpuCores: number;
  /** raw-reads: the largest answer, in bytes. */
  largestReplyBytes?: number | undefined;
}
export type ScenarioResult = Omit<LoadResult, 'loadCpuCores'>;

/** Load process → orchestrator: the warm-up is over; the fan-out's subscribers are connected; the end. */
export type ChildMessage =
  | { type: 'measuring' }
  | { type: 'await-subscribers'; count: number }
  | { type: 'result'; result: LoadResult }
  | { type: 'failed'; message: string };
export type ParentMessage = { type: 'run'; job: LoadJob } | { type: 'subscribers-live'; live: boolean; active: number };

/** Orchestrator → server process: begin and end bracket a job; memory is taken after a forced GC. */
export interface HostCalls {
  begin: null;
  end: ServerSide;
  memory: MemorySample;
  subscriptions: number;
  close: null;
}
export type HostCall = keyof HostCalls;
export type HostMessage = { type: 'listening'; baseUrl: string } | { type: 'reply'; id: number; value?: unknown; error?: string };

/** Adds `n` to `outcomes[key]`. */
export function tally(outcomes: Record<string, number>, key: string, n = 1): void {
  outcomes[key] = (outcomes[key] ?? 0) + n;
}
