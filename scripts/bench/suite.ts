// One bench run: every selected scenario against the project's process(es), each followed by the
// same scenario against its floor (when the run has one), every run driven by its own load process.
import { loadavg } from 'node:os';
import { runInLoadProcess } from './load-process.ts';
import type { MemorySample, ServerSide } from './monitors.ts';
import type { BenchOptions } from './options.ts';
import { SCENARIOS, type LoadJob, type LoadResult, type LoadScenario, type ScenarioName } from './protocol.ts';
import type { Target } from './targets.ts';

/** The floor that each scenario is compared with. */
export const FLOOR_OF = {
  'webhook-00': 'receiver',
  'webhook-01': 'receiver',
  'query-banks': 'subgraph',
  'query-account': 'subgraph',
  'query-notifications': 'subgraph',
  fanout: 'broadcaster',
} as const satisfies Record<ScenarioName, string>;
export type FloorKind = (typeof FLOOR_OF)[ScenarioName];

/** Ends the name of a webhook floor that stores our row (`--floor-row ours`): no target is judged against it. */
export const OUR_ROW_SUFFIX = ' with our row';

/** The server processes of one run: ours, ours as replicas (ours first among them), and the floors it measures. */
export interface SuiteTargets {
  ours: Target[];
  /** When given, every scenario also runs spread over these (two replicas against one). */
  replicas?: Target[] | undefined;
  floors: Partial<Record<FloorKind, Target>>;
}

/** Which servers a report measured: ours, ours as replicas, or a floor. */
export type Side = 'ours' | 'replicas' | 'floor';

/** One scenario on one side: what the load side measured, what the servers saw, or why it failed. */
export interface ScenarioReport extends LoadResult {
  side: Side;
  /** The processes it ran against, e.g. "ours" or "bare receiver". */
  target: string;
  /** Fan-out only. */
  subscribers: number | undefined;
  /** Fan-out only: growth of the servers' memory (after GC) per live subscriber, in KB. */
  perSubscriberKB: { rss: number; heap: number } | undefined;
  servers: { name: string; side: ServerSide }[];
  /** Why the scenario could not run to the end; counted as an error. */
  failure: string | undefined;
}

/** How long the fan-out's subscribers may take to be counted live by the servers. */
const SUBSCRIBE_TIMEOUT_MS = 120_000;
/** Deliveries per fan-out run at most (subscribers × events), so 10,000 subscribers take seconds, not minutes. */
const MAX_DELIVERIES = 200_000;

/** The events of a fan-out run with `subscribers`: `--events`, fewer for many subscribers, never below 5. */
export function eventsFor(subscribers: number, events: number): number {
  return Math.min(events, Math.max(5, Math.floor(MAX_DELIVERIES / subscribers)));
}

/**
 * Runs every selected scenario, ours then its floor, printing a progress line for each. An HTTP
 * scenario with a floor runs `--rounds` times, the two sides taking turns, and each side's median
 * run (by throughput) is kept: on a shared machine a slow moment then tends to hit both sides.
 */
export async function runSuite(options: BenchOptions, targets: SuiteTargets, title: string): Promise<ScenarioReport[]> {
  const reports: ScenarioReport[] = [];
  const scenarios = SCENARIOS.filter((scenario) => options.selected.includes(scenario));
  for (const scenario of scenarios) {
    for (const subscribers of scenario === 'fanout' ? options.subscribers : [undefined]) {
      const floor = targets.floors[FLOOR_OF[scenario]];
      const sides: [Side, Target[]][] = [['ours', targets.ours]];
      if (targets.replicas) sides.push(['replicas', targets.replicas]);
      if (floor) sides.push(['floor', [floor]]);
      const rounds = scenario === 'fanout' || sides.length === 1 ? 1 : options.rounds;
      const runs = sides.map(() => [] as ScenarioReport[]);
      for (let round = 1; round <= rounds; round += 1) {
        for (const [index, [side, servers]] of sides.entries()) {
          // Replicas are named "ours", "ours #2": together, "ours ×2".
          const name = servers.length > 1 ? `${servers[0]!.name.replace(/ #\d+$/, '')} ×${servers.length}` : servers[0]!.name;
          const of = rounds > 1 ? ` (round ${round} of ${rounds})` : '';
          // The load average says when other processes competed for the cores during this one.
          process.stderr.write(`${title} ${progressLine(scenario, options, subscribers)} against ${name}${of} (load average ${loadavg()[0]!.toFixed(1)})…\n`);
          const report = await runOnServers({ scenario, options, subscribers: subscribers ?? options.subscribers[0]!, side, name, servers });
          process.stderr.write(`  ${describeDone(report)}\n`);
          runs[index]!.push(report);
        }
      }
      reports.push(...runs.map(median));
    }
  }
  return reports;
}

/**
 * The run with the median throughput (the lower middle of an even count; a failed run counts as the
 * slowest), carrying every round's errors and the first failure: a wrong reply in any round shows.
 */
export function median(runs: readonly ScenarioReport[]): ScenarioReport {
  const speed = (run: ScenarioReport) => (run.failure ? -1 : run.perSecond);
  const middle = [...runs].sort((a, b) => speed(a) - speed(b))[Math.floor((runs.length - 1) / 2)]!;
  if (runs.length === 1) return middle;
  return { ...middle, errors: runs.reduce((sum, run) => sum + run.errors, 0), failure: runs.find((run) => run.failure)?.failure };
}

function progressLine(scenario: LoadScenario, options: BenchOptions, subscribers: number | undefined): string {
  return scenario === 'fanout'
    ? `fanout: ${subscribers} subscribers × ${eventsFor(subscribers!, options.events)} events`
    : `${scenario}: ${options.durationS} s at ${options.connections} connections`;
}

function describeDone(report: ScenarioReport): string {
  if (report.failure) return `failed: ${report.failure}`;
  const unit = report.scenario === 'fanout' ? 'deliveries/s' : 'req/s';
  const memory = report.perSubscriberKB ? `, ${report.perSubscriberKB.rss.toFixed(1)} KB rss per subscriber` : '';
  return `${report.perSecond.toFixed(0)} ${unit}, p50 ${report.latencyMs.p50.toFixed(2)} ms, p99 ${report.latencyMs.p99.toFixed(2)} ms, ${report.errors} errors${memory}`;
}

export interface ScenarioRun {
  scenario: LoadScenario;
  options: BenchOptions;
  subscribers: number;
  side: Side;
  name: string;
  servers: Target[];
  /** What the growth mode's scenarios add to the job (their query, their resume, their summary). */
  job?: Pick<LoadJob, 'query' | 'resume' | 'summary'>;
}

/** Runs one scenario in a load process, bracketing it with the servers' own measurements. */
export async function runOnServers(run: ScenarioRun): Promise<ScenarioReport> {
  const { scenario, options, subscribers, servers } = run;
  const { durationS, warmupS, connections } = options;
  const events = eventsFor(subscribers, options.events);
  const baseUrls = servers.map((server) => server.baseUrl);
  const job: LoadJob = { scenario, baseUrl: baseUrls[0]!, baseUrls, durationS, warmupS, connections, subscribers, events, ...run.job };
  const begin = () => void Promise.all(servers.map((server) => server.call('begin'))).catch(() => {});
  const memory = scenario === 'fanout' ? await memoryGrowth(servers) : undefined;
  const base = { side: run.side, target: run.name, subscribers: scenario === 'fanout' ? subscribers : undefined };
  begin();
  try {
    const result = await runInLoadProcess(job, {
      onMeasuring: begin,
      awaitSubscribers: async (count) => {
        const live = await waitForSubscriptions(servers, (memory?.baseline ?? 0) + count);
        if (live.live && memory) await memory.measure(count);
        return live;
      },
    });
    const sides = await Promise.all(servers.map(async (server) => ({ name: server.name, side: await server.call('end') })));
    return { ...result, ...base, perSubscriberKB: memory?.perSubscriberKB(), servers: sides, failure: undefined };
  } catch (error) {
    await Promise.all(servers.map((server) => server.call('end').catch(() => undefined)));
    return { ...failedResult(scenario), ...base, perSubscriberKB: undefined, servers: [], failure: (error as Error).message };
  }
}

/** Memory after GC and live subscriptions now; `measure` later gives the growth per subscriber. */
async function memoryGrowth(servers: Target[]) {
  const before = await Promise.all(servers.map((server) => server.call('memory')));
  const baseline = (await Promise.all(servers.map((server) => server.call('subscriptions')))).reduce((a, b) => a + b, 0);
  let growth: { rss: number; heap: number } | undefined;
  const total = (samples: MemorySample[], key: keyof MemorySample) => samples.reduce((sum, sample) => sum + sample[key], 0);
  return {
    baseline,
    async measure(count: number): Promise<void> {
      const after = await Promise.all(servers.map((server) => server.call('memory')));
      // MiB → KB per subscriber.
      const per = (key: keyof MemorySample) => ((total(after, key) - total(before, key)) * 1024) / count;
      growth = { rss: per('rss'), heap: per('heapUsed') };
    },
    perSubscriberKB: () => growth,
  };
}

/** Waits until the servers together count `target` live subscriptions; `live: false` after the time-out. */
async function waitForSubscriptions(servers: Target[], target: number): Promise<{ live: boolean; active: number }> {
  const deadline = Date.now() + SUBSCRIBE_TIMEOUT_MS;
  for (;;) {
    const active = (await Promise.all(servers.map((server) => server.call('subscriptions')))).reduce((a, b) => a + b, 0);
    if (active >= target) return { live: true, active };
    if (Date.now() > deadline) return { live: false, active };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function failedResult(scenario: LoadScenario): LoadResult {
  const latencyMs = { p50: 0, p90: 0, p99: 0, max: 0 };
  return { scenario, load: '-', count: 0, seconds: 0, perSecond: 0, latencyMs, non2xx: 0, errors: 1, outcomes: {}, loadCpuCores: 0 };
}
