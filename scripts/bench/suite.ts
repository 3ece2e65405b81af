// One run of the scenarios: each against ours (one replica, then two when there are) and against its
// floor, rounds taking turns, every run driven by a load process of its own.
import { loadavg } from 'node:os';
import { runInLoadProcess } from './load-process.ts';
import type { BenchOptions } from './options.ts';
import { metric } from './graphql.ts';
import {
  BANKS_SCENARIOS,
  SCENARIOS,
  type LoadJob,
  type LoadResult,
  type MemorySample,
  type ScenarioName,
  type ServerSide,
} from './protocol.ts';
import type { Target } from './targets.ts';

/** The floor each scenario is measured against. */
export const FLOOR_OF = {
  'webhook-00': 'receiver',
  'webhook-01': 'receiver',
  'webhook-02': 'receiver',
  'query-banks': 'subgraph',
  'query-banks-600': 'subgraph',
  'query-account': 'subgraph',
  fanout: 'broadcaster',
} as const satisfies Record<ScenarioName, string>;
export type FloorKind = (typeof FLOOR_OF)[ScenarioName];

/** The servers of one run: ours, ours as two replicas (ours first among them), and the floors. */
export interface SuiteTargets {
  ours: Target[];
  replicas?: Target[] | undefined;
  /** Ours with authentication on, and the Authorization header its queries carry. */
  withToken?: { target: Target; headers: Record<string, string> } | undefined;
  floors: Partial<Record<FloorKind, Target>>;
  /**
   * `banks` on the long list: ours and ours with a token over a bank that lists that many (the token
   * the one `withToken` carries), and bare Apollo serving the same list. The scenario runs only with them.
   */
  longList?: { ours: Target; withToken: Target; floor: Target } | undefined;
}

/** The scenarios that also run with a token, against ours with authentication on. */
export const TOKEN_SCENARIOS: readonly ScenarioName[] = ['query-banks', 'query-banks-600', 'query-account'];

export type Side = 'ours' | 'replicas' | 'token' | 'floor';

/** One job on one side: what the load side measured, what the servers saw, or why it failed. */
export interface ScenarioReport extends LoadResult {
  side: Side;
  /** The servers it ran against, e.g. "ours ×2" or "bare receiver". */
  target: string;
  /** Fan-out only. */
  subscribers: number | undefined;
  /** Fan-out only: the servers' memory growth (after GC) per live subscriber, KB. */
  perSubscriberKB: { rss: number; heap: number } | undefined;
  servers: { name: string; side: ServerSide }[];
  /** Why it could not run to the end; counted as an error. */
  failure: string | undefined;
  /** `banks` on ours: the servers' response-cache hits and misses over the run, warm-up included. */
  responseCache?: { hit: number; miss: number } | undefined;
}

const SUBSCRIBE_TIMEOUT_MS = 120_000;
/** Deliveries per fan-out run at most, so 10,000 subscribers take seconds, not minutes. */
const MAX_DELIVERIES = 200_000;

/** Events of a fan-out run: --events, fewer for many subscribers, never below 5. */
export const eventsFor = (subscribers: number, events: number) => Math.min(events, Math.max(5, Math.floor(MAX_DELIVERIES / subscribers)));

/**
 * Runs every selected scenario. One with a floor runs --rounds times, the sides taking turns, and each
 * side's median run (by throughput) is kept: on a shared machine a slow moment then tends to land on both.
 */
export async function runSuite(options: BenchOptions, targets: SuiteTargets, title: string): Promise<ScenarioReport[]> {
  const reports: ScenarioReport[] = [];
  for (const scenario of SCENARIOS.filter((name) => options.selected.includes(name))) {
    const on = targetsOf(scenario, targets);
    if (on === undefined) continue;
    for (const subscribers of scenario === 'fanout' ? options.subscribers : [options.subscribers[0]!]) {
      const floor = on.floors[FLOOR_OF[scenario]];
      const sides: [Side, Target[]][] = [['ours', on.ours]];
      if (on.replicas) sides.push(['replicas', on.replicas]);
      if (on.withToken && TOKEN_SCENARIOS.includes(scenario)) sides.push(['token', [on.withToken.target]]);
      if (floor) sides.push(['floor', [floor]]);
      const rounds = scenario === 'fanout' || sides.length === 1 ? 1 : options.rounds;
      const runs = sides.map(() => [] as ScenarioReport[]);
      for (let round = 1; round <= rounds; round += 1) {
        for (const [index, [side, servers]] of sides.entries()) {
          const what =
            scenario === 'fanout'
              ? `fanout: ${subscribers} subscribers × ${eventsFor(subscribers, options.events)} events`
              : `${scenario}: ${options.durationS} s`;
          const of = rounds > 1 ? ` (round ${round} of ${rounds})` : '';
          // The load average says when other processes competed for the cores meanwhile.
          process.stderr.write(`${title} ${what} against ${nameOf(servers)}${of} (load average ${loadavg()[0]!.toFixed(1)})…\n`);
          const headers = side === 'token' ? on.withToken?.headers : undefined;
          const report = await runOnServers(scenario, options, servers, side, {
            subscribers,
            events: eventsFor(subscribers, options.events),
            headers,
          });
          process.stderr.write(`  ${describe(report)}\n`);
          runs[index]!.push(report);
        }
      }
      reports.push(...runs.map(median));
    }
  }
  return reports;
}

/** The servers `scenario` runs on: the long list's for `banks` on the long list (none when it has none), else the run's. */
function targetsOf(scenario: ScenarioName, targets: SuiteTargets): SuiteTargets | undefined {
  if (scenario !== 'query-banks-600') return targets;
  const long = targets.longList;
  if (long === undefined) return undefined;
  const withToken = targets.withToken && { ...targets.withToken, target: long.withToken };
  return { ours: [long.ours], withToken, floors: { subgraph: long.floor } };
}

/** Replicas are named "ours", "ours #2": together, "ours ×2". */
const nameOf = (servers: Target[]) => (servers.length > 1 ? `${servers[0]!.name} ×${servers.length}` : servers[0]!.name);

/** The median run by throughput (a failed run counts as the slowest), carrying every round's errors and the first failure. */
export function median(runs: readonly ScenarioReport[]): ScenarioReport {
  const speed = (run: ScenarioReport) => (run.failure ? -1 : run.perSecond);
  const middle = [...runs].sort((a, b) => speed(a) - speed(b))[Math.floor((runs.length - 1) / 2)]!;
  return { ...middle, errors: runs.reduce((sum, run) => sum + run.errors, 0), failure: runs.find((run) => run.failure)?.failure };
}

export function describe(report: ScenarioReport): string {
  if (report.failure) return `failed: ${report.failure}`;
  const memory = report.perSubscriberKB ? `, ${report.perSubscriberKB.rss.toFixed(1)} KB rss per subscriber` : '';
  const { p50, p99, max } = report.latencyMs;
  return `${report.perSecond.toFixed(0)}/s, p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${max.toFixed(1)} ms, ${report.errors} errors${memory}`;
}

/** Runs one job in a load process, bracketed by the servers' own measurements (and, for the fan-out, their memory). */
export async function runOnServers(
  scenario: LoadJob['scenario'],
  options: BenchOptions,
  servers: Target[],
  side: Side,
  extra: Partial<LoadJob> = {},
): Promise<ScenarioReport> {
  const { durationS, warmupS, connections } = options;
  const baseUrls = servers.map((server) => server.baseUrl);
  const job: LoadJob = { scenario, baseUrl: baseUrls[0]!, baseUrls, durationS, warmupS, connections, subscribers: 0, events: 0, ...extra };
  const base = { side, target: nameOf(servers), subscribers: scenario === 'fanout' ? job.subscribers : undefined };
  const each = <C extends 'begin' | 'end' | 'memory' | 'subscriptions'>(call: C) => Promise.all(servers.map((server) => server.call(call)));
  const total = (samples: MemorySample[], key: keyof MemorySample) => samples.reduce((sum, sample) => sum + sample[key], 0);
  const before = scenario === 'fanout' ? await each('memory') : [];
  const baseline = scenario === 'fanout' ? (await each('subscriptions')).reduce((a, b) => a + b, 0) : 0;
  let perSubscriberKB: ScenarioReport['perSubscriberKB'];
  const begin = () => void each('begin').catch(() => {});
  // Hits and misses as an operator reads them, before and after: floors have no response cache.
  const cacheCounts = BANKS_SCENARIOS.includes(scenario as ScenarioName) && side !== 'floor' ? () => responseCacheOf(baseUrls) : undefined;
  const cacheBefore = await cacheCounts?.();
  begin();
  try {
    const result = await runInLoadProcess(job, {
      onMeasuring: begin,
      async awaitSubscribers(count) {
        for (const deadline = Date.now() + SUBSCRIBE_TIMEOUT_MS; ; await new Promise((resolve) => setTimeout(resolve, 50))) {
          const active = (await each('subscriptions')).reduce((a, b) => a + b, 0) - baseline;
          if (active < count && Date.now() < deadline) continue;
          if (active < count) return { live: false, active };
          const after = await each('memory');
          // MiB → KB per subscriber.
          const per = (key: keyof MemorySample) => ((total(after, key) - total(before, key)) * 1024) / count;
          perSubscriberKB = { rss: per('rss'), heap: per('heapUsed') };
          return { live: true, active };
        }
      },
    });
    const sides = await each('end');
    const cacheAfter = await cacheCounts?.();
    const responseCache = cacheBefore && cacheAfter && { hit: cacheAfter.hit - cacheBefore.hit, miss: cacheAfter.miss - cacheBefore.miss };
    return {
      ...result,
      ...base,
      perSubscriberKB,
      servers: sides.map((side, i) => ({ name: servers[i]!.name, side })),
      failure: undefined,
      responseCache,
    };
  } catch (error) {
    await each('end').catch(() => undefined);
    return { ...failed(scenario), ...base, perSubscriberKB: undefined, servers: [], failure: (error as Error).message };
  }
}

/** `graphql_response_cache_total` of every server, by outcome. */
async function responseCacheOf(baseUrls: string[]): Promise<{ hit: number; miss: number }> {
  const counts = { hit: 0, miss: 0 };
  for (const baseUrl of baseUrls) {
    counts.hit += await metric(baseUrl, 'graphql_response_cache_total{outcome="hit"}');
    counts.miss += await metric(baseUrl, 'graphql_response_cache_total{outcome="miss"}');
  }
  return counts;
}

function failed(scenario: LoadJob['scenario']): LoadResult {
  return {
    scenario,
    load: '-',
    count: 0,
    seconds: 0,
    perSecond: 0,
    latencyMs: { p50: 0, p90: 0, p99: 0, max: 0 },
    errors: 1,
    outcomes: {},
    loadCpuCores: 0,
  };
}
