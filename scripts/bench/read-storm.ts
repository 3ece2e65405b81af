// The webhook under a read storm: ours alone on a store of its own, filled through the webhook with a
// year of notifications; then the webhook at a modest fixed rate, alone and under a storm of
// year-long summaries (storm.ts), rounds taking turns. What it shows is whether any read holds the
// webhook: the target is on the worst delivery of the storm rounds (docs/benchmarks.md, "Targets").
import { loadavg } from 'node:os';
import { runInLoadProcess } from './load-process.ts';
import type { BenchOptions } from './options.ts';
import type { LoadJob } from './protocol.ts';
import { below, ms, row, whole, type Row } from './report.ts';
import { appEnv, ownStore, type Services, type StoreKind } from './stores.ts';
import { describe, runOnServers, type ScenarioReport } from './suite.ts';
import { startTarget, type Target } from './targets.ts';

const DAY_MS = 86_400_000;
/** The bank's zone, West Africa Time (UTC+1): summaries cut its days. */
const WAT_MS = 3_600_000;
const SIZES = {
  full: { notifications: 60_000, rate: 200, readers: 8 },
  quick: { notifications: 3_000, rate: 100, readers: 2 },
};
const WEBHOOK_CONNECTIONS = 20;
const FILL_CONNECTIONS = 50;
const MAX_MS = 300;

/** Fills a store of `kind` and measures the webhook with and without the storm, rounds taking turns. */
export async function readStorm(
  options: BenchOptions,
  kind: StoreKind,
  parentDir: string,
  services?: Services,
): Promise<{ rows: Row[]; reports: ScenarioReport[] }> {
  const size = options.quick ? SIZES.quick : SIZES.full;
  const say = (line: string) => process.stderr.write(`[${kind} read storm] ${line}\n`);
  const store = await ownStore(kind, parentDir, services?.databaseUrl);
  let target: Target | undefined;
  try {
    target = await startTarget('app', 'ours', appEnv(store.storeUrl, services?.redisUrl ?? 'memory:'));
    // A year of bank days, the last of them today's: the summary every reader asks for.
    const to = Math.floor((Date.now() + WAT_MS) / DAY_MS) * DAY_MS - WAT_MS + DAY_MS;
    const from = to - 365 * DAY_MS;
    say(`filling ${size.notifications.toLocaleString('en')} notifications through the webhook, their bank times over the past year…`);
    const fill = await runOnServers('fill', { ...options, connections: FILL_CONNECTIONS, warmupS: 0 }, [target], 'ours', {
      fill: { first: 1, count: size.notifications, startMs: from, stepMs: (Date.now() - from) / size.notifications },
    });
    if (fill.failure || fill.errors > 0) throw new Error(`the fill failed: ${describe(fill)}`);
    const webhook = { ...options, connections: WEBHOOK_CONNECTIONS };
    const quiet: ScenarioReport[] = [];
    const storm: ScenarioReport[] = [];
    const reads: ScenarioReport[] = [];
    for (let round = 1; round <= options.rounds; round += 1) {
      const of = options.rounds > 1 ? ` (round ${round} of ${options.rounds})` : '';
      say(`webhook 00 at ${size.rate}/s, ${options.durationS} s, alone${of} (load average ${loadavg()[0]!.toFixed(1)})…`);
      quiet.push({ ...(await runOnServers('webhook-00', webhook, [target], 'ours', { rate: size.rate })), target: 'ours, no storm' });
      say(`  ${describe(quiet.at(-1)!)}`);
      say(`the same under ${size.readers} readers of a year-long summary and a 100-alias document every 2 s${of}…`);
      const result = await underStorm(target, webhook, size, new Date(from).toISOString(), new Date(to).toISOString());
      storm.push(result.webhook);
      reads.push(result.reads);
      say(`  ${describe(result.webhook)}; reads: ${describe(result.reads)}`);
    }
    const [calm, stormy, read] = [middle(quiet), middle(storm), middle(reads)];
    // The target is on the worst delivery of any storm round, not of the middle one.
    stormy.latencyMs = { ...stormy.latencyMs, max: Math.max(...storm.map((r) => r.latencyMs.max)) };
    calm.latencyMs = { ...calm.latencyMs, max: Math.max(...quiet.map((r) => r.latencyMs.max)) };
    return { rows: stormRows(size.rate, calm, stormy, read, reads), reports: [fill, calm, stormy, read] };
  } finally {
    await target?.stop();
    await store.drop();
  }
}

/** One storm round: the readers start, and once they are reading the webhook load runs beside them. */
async function underStorm(target: Target, options: BenchOptions, size: typeof SIZES.full, from: string, to: string) {
  const reading = Promise.withResolvers<void>();
  const job: LoadJob = {
    scenario: 'storm-reads',
    baseUrl: target.baseUrl,
    baseUrls: [target.baseUrl],
    // Past the webhook's whole run, its start-up included.
    durationS: options.warmupS + options.durationS + 1,
    warmupS: 0,
    connections: size.readers,
    subscribers: 0,
    events: 0,
    storm: { clients: size.readers, from, to },
  };
  const readers = runInLoadProcess(job, { onMeasuring: reading.resolve });
  await Promise.race([reading.promise, readers.catch(() => undefined)]);
  const webhook = await runOnServers('webhook-00', options, [target], 'ours', { rate: size.rate });
  const base = { side: 'ours' as const, target: 'ours, readers', subscribers: undefined, perSubscriberKB: undefined, servers: [] };
  const reads: ScenarioReport = await readers.then(
    (result) => ({ ...result, ...base, failure: undefined }),
    (error: Error) => ({
      ...webhook,
      ...base,
      scenario: 'storm-reads',
      count: 0,
      perSecond: 0,
      errors: 1,
      outcomes: {},
      failure: error.message,
    }),
  );
  return { webhook: { ...webhook, target: 'ours, under the storm' }, reads };
}

/** The run with the median p99, carrying every run's errors and first failure. */
function middle(runs: ScenarioReport[]): ScenarioReport {
  const sorted = [...runs].sort((a, b) => a.latencyMs.p99 - b.latencyMs.p99);
  return {
    ...sorted[Math.floor((sorted.length - 1) / 2)]!,
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    failure: runs.find((r) => r.failure)?.failure,
  };
}

function stormRows(rate: number, calm: ScenarioReport, stormy: ScenarioReport, read: ScenarioReport, reads: ScenarioReport[]): Row[] {
  const label = `webhook 00 at ${rate}/s under a read storm`;
  const value = (r: ScenarioReport, pick: (r: ScenarioReport) => number) => (r.failure ? Number.NaN : pick(r));
  const sum = (key: string) => reads.reduce((total, r) => total + (r.outcomes[key] ?? 0), 0);
  const keys = Object.keys(Object.assign({}, ...reads.map((r) => r.outcomes)));
  const count = (which: (key: string) => boolean) => keys.filter(which).reduce((total, key) => total + sum(key), 0);
  return [
    row(
      `${label}: acks/s`,
      'no storm',
      value(stormy, (r) => r.perSecond),
      value(calm, (r) => r.perSecond),
      whole,
    ),
    row(
      `${label}: p50 ms`,
      'no storm',
      value(stormy, (r) => r.latencyMs.p50),
      value(calm, (r) => r.latencyMs.p50),
      ms,
    ),
    row(
      `${label}: p99 ms`,
      'no storm',
      value(stormy, (r) => r.latencyMs.p99),
      value(calm, (r) => r.latencyMs.p99),
      ms,
    ),
    row(
      `${label}: max ms`,
      'no storm',
      value(stormy, (r) => r.latencyMs.max),
      value(calm, (r) => r.latencyMs.max),
      ms,
      below(MAX_MS, 'ms'),
    ),
    row(
      'read storm: year-long summaries answered/s',
      '-',
      value(read, (r) => (r.outcomes['summary ok'] ?? 0) / r.seconds),
      Number.NaN,
      (v) => v.toFixed(1),
    ),
    {
      figure: 'read storm: 100-alias documents answered / refused / failed',
      floor: '-',
      ours: `${sum('hostile ok')} / ${count((key) => key.startsWith('hostile refused'))} / ${count((key) => key.startsWith('hostile') && key !== 'hostile ok' && !key.startsWith('hostile refused'))}`,
      floorValue: '-',
      ratio: '',
      target: '',
      met: '',
    },
  ];
}
