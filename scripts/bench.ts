// `npm run bench -- [--duration 5] [--connections 100] [--rounds 3] [--subscribers 1000,10000] [--events 30] [--only …] [--quick] [--tracing] [--json]`
// Measures the subgraph against floors, in the same run: a bare durable receiver for the webhook, a
// bare Apollo subgraph for the queries and the cold start, a zero-work graphql-transport-ws
// broadcaster for the fan-out. Ours and every floor run in their own process on a loopback port;
// each scenario is driven by its own load process (autocannon; graphql-ws clients), so no figure
// includes the load generator's work on the server's event loop. Prints one comparison table (ours,
// floor, ratio, the target), then the details. With DATABASE_URL and REDIS_URL set, a second
// run on them with two replicas follows. Exits 1 when a scenario saw errors.
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { measureColdStarts, type ColdStart } from './bench/cold-start.ts';
import { comparisonRows, comparisonTable, FLOORS_LEGEND, type ComparisonRow } from './bench/compare.ts';
import { probeDisk, type DiskReport } from './bench/disk.ts';
import { killLoadProcess } from './bench/load-process.ts';
import { readOptions, UsageError, USAGE, type BenchOptions } from './bench/options.ts';
import { isolatedServices } from './bench/replicas.ts';
import { clientTable, LEGEND, serverTable } from './bench/report.ts';
import { FLOOR_OF, runSuite, type FloorKind, type ScenarioReport, type SuiteTargets } from './bench/suite.ts';
import { killTargets, startTarget, type Target } from './bench/targets.ts';
import { SCENARIOS } from './bench/protocol.ts';
import { measureStalledResumes, stalledResumesTable, type StalledResumes } from './bench/stalled-resumes.ts';
import { startTraceSink, TRACING_SCENARIOS, tracingCostTable } from './bench/tracing.ts';

const FLOOR_LABELS: Record<FloorKind, string> = { receiver: 'bare receiver', subgraph: 'bare Apollo', broadcaster: 'broadcaster' };

function machine() {
  const list = cpus();
  return { cpus: list.length, model: list[0]?.model.trim() ?? 'unknown', node: process.version, platform: `${process.platform} ${process.arch}` };
}

function printHeader(disk: DiskReport): void {
  const m = machine();
  console.log(`machine: ${m.cpus} × ${m.model}, ${m.platform}, Node ${m.node}; ${new Date().toISOString().slice(0, 16)}Z`);
  const mode = process.env.NODE_ENV === 'production' ? 'NODE_ENV=production' : 'development (NODE_ENV is not production: graphql-js and Apollo add their checks)';
  console.log(`ours: the subgraph (createApp) in its own process, sandbox bank in that process; ${mode}`);
  console.log(`SQLite files on ${disk.filesystem} (WAL, synchronous=FULL); one fsync of a 4 KiB write there: p50 ${disk.fsyncMs.p50.toFixed(2)} ms, p99 ${disk.fsyncMs.p99.toFixed(2)} ms`);
  console.log(`load: a separate process per run, sharing the ${m.cpus} cores with the server it drives; load average before: ${loadavg()[0]!.toFixed(2)}`);
  console.log('Compare within one run (the ratios): the machine is shared and noisy.\n');
}

/** The environment of our server process: the sandbox bank, the given store and pub/sub, no logs. */
function appEnv(storeUrl: string, pubsubUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return { UPSTREAM_MODE: 'sandbox', STORE_URL: storeUrl, PUBSUB_URL: pubsubUrl, LOG_LEVEL: 'silent', ...extra };
}

/** The floors the selected scenarios need. */
function floorsNeeded(options: BenchOptions): FloorKind[] {
  const kinds = SCENARIOS.filter((scenario) => options.selected.includes(scenario)).map((scenario) => FLOOR_OF[scenario]);
  return [...new Set(kinds)];
}

/** Starts the targets, runs the suite on them, and stops them whatever happens. */
async function onTargets(start: () => Promise<SuiteTargets>, run: (targets: SuiteTargets) => Promise<ScenarioReport[]>) {
  const started: Target[] = [];
  try {
    const targets = await start();
    started.push(...targets.ours, ...Object.values(targets.floors));
    return await run(targets);
  } finally {
    await Promise.all(started.map((target) => target.stop()));
    killTargets();
  }
}

/** The first run: ours on its embedded default (SQLite file, in-memory pub/sub) beside every floor. */
async function sqliteRun(options: BenchOptions, parentDir: string): Promise<ScenarioReport[]> {
  if (!SCENARIOS.some((scenario) => options.selected.includes(scenario))) return [];
  const dir = mkdtempSync(join(parentDir, 'bank-subgraph-bench-'));
  try {
    return await onTargets(
      async () => {
        const ours = [await startTarget('app', 'ours', appEnv(`sqlite:${join(dir, 'collections.db')}`, 'memory:'))];
        const floors: SuiteTargets['floors'] = {};
        for (const kind of floorsNeeded(options)) floors[kind] = await startTarget(kind, FLOOR_LABELS[kind], { BENCH_DIR: dir });
        return { ours, floors };
      },
      (targets) => runSuite(options, targets, '[sqlite]'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The second run: two replicas on PostgreSQL + Redis (a schema and channel prefix of their own). */
async function replicaRun(options: BenchOptions, databaseUrl: string, redisUrl: string): Promise<ScenarioReport[]> {
  const services = await isolatedServices(databaseUrl, redisUrl);
  try {
    const env = appEnv(services.storeUrl, services.pubsubUrl, { BENCH_CHANNEL_PREFIX: services.channelPrefix });
    return await onTargets(
      // One after the other: the first migrates the schema.
      async () => ({ ours: [await startTarget('app', 'ours #1', env), await startTarget('app', 'ours #2', env)], floors: {} }),
      (targets) => runSuite(options, targets, '[postgres ×2]'),
    );
  } finally {
    await services.drop();
  }
}

/** With --tracing: query-banks and webhook-00 again, ours alone, with tracing on and exporting to a sink. */
async function tracingRun(options: BenchOptions, parentDir: string, off: ScenarioReport[]): Promise<ScenarioReport[]> {
  const sink = await startTraceSink();
  const dir = mkdtempSync(join(parentDir, 'bank-subgraph-bench-'));
  try {
    process.stderr.write(`tracing on: ${TRACING_SCENARIOS.join(', ')} again, every span exported to a sink process…\n`);
    const traced = { ...options, selected: TRACING_SCENARIOS.filter((scenario) => options.selected.includes(scenario)) };
    const env = appEnv(`sqlite:${join(dir, 'collections.db')}`, 'memory:', sink.env);
    const on = await onTargets(async () => ({ ours: [await startTarget('app', 'ours +tracing', env)], floors: {} }), (targets) =>
      runSuite(traced, targets, '[tracing on]'),
    );
    const received = await sink.stop();
    console.log(`\nTRACING ON against OFF (ours, SQLite; the sink received ${received.requests} exports, ${(received.bytes / 1024 / 1024).toFixed(1)} MiB)\n\n${tracingCostTable(off, on)}`);
    return on;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function printRun(title: string, reports: ScenarioReport[], comparison: ComparisonRow[], floorNote = ''): void {
  console.log(`\n${title}\n\n${comparisonTable(comparison, floorNote)}`);
  if (reports.length > 0) console.log(`\n${clientTable(reports)}\n\n${serverTable(reports)}`);
}

async function main(options: BenchOptions): Promise<number> {
  const started = performance.now();
  const parentDir = options.dir ?? tmpdir();
  const disk = probeDisk(parentDir);
  printHeader(disk);
  const sqlite = await sqliteRun(options, parentDir);
  let coldStart: ColdStart | undefined;
  if (options.selected.includes('cold-start')) {
    process.stderr.write(`cold start: node src/main.ts and the bare Apollo subgraph, ${options.coldStarts} × each…\n`);
    coldStart = await measureColdStarts(options.coldStarts, parentDir);
    process.stderr.write(`  ours ${coldStart.oursMs.toFixed(0)} ms, floor ${coldStart.floorMs.toFixed(0)} ms\n`);
  }
  let stalledResumes: StalledResumes | undefined;
  if (options.selected.includes('stalled-resumes')) {
    process.stderr.write('stalled resumes: idle subscribers, then resumes whose clients read nothing, then new notifications…\n');
    stalledResumes = await measureStalledResumes({ quick: options.quick, dir: parentDir });
  }
  const floors = sqlite.filter((report) => report.side === 'floor');
  const runs = [{ name: 'sqlite', reports: sqlite, comparison: comparisonRows(sqlite.filter((r) => r.side === 'ours'), floors, coldStart) }];
  printRun('ONE PROCESS, SQLite file + in-memory pub/sub (the embedded default)', sqlite, runs[0]!.comparison);

  if (stalledResumes) console.log(`\nSTALLED RESUMES (ours alone, SQLite file + in-memory pub/sub)\n\n${stalledResumesTable(stalledResumes)}`);

  if (options.tracing) runs.push({ name: 'tracing-on', reports: await tracingRun(options, parentDir, sqlite), comparison: [] });

  const { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } = process.env;
  if (databaseUrl && redisUrl && SCENARIOS.some((scenario) => options.selected.includes(scenario))) {
    const replicas = await replicaRun(options, databaseUrl, redisUrl);
    const comparison = comparisonRows(replicas, floors, undefined);
    runs.push({ name: 'postgres-redis-2-replicas', reports: replicas, comparison });
    printRun('TWO REPLICAS on PostgreSQL + Redis (HTTP load and subscribers spread over both; webhook posts for the fan-out to #1)', replicas, comparison, ' (1st run)');
  }

  const all = runs.flatMap((run) => run.reports);
  const failed = [...new Set(all.filter((report) => report.errors > 0).map((report) => `${report.scenario} on ${report.target}`))];
  if (stalledResumes && stalledResumes.closes['1013'] !== stalledResumes.subscribers) failed.push('stalled-resumes (not every one closed with 1013)');
  const seconds = (performance.now() - started) / 1000;
  console.log(`\n${FLOORS_LEGEND}\n${LEGEND}`);
  console.log(`\nload average after: ${loadavg()[0]!.toFixed(2)}; total time ${seconds.toFixed(0)} s`);
  console.log(failed.length > 0 ? `ERRORS in ${failed.join(', ')}` : 'no errors');
  if (options.json) {
    const { durationS, warmupS, connections, subscribers, events } = options;
    const settings = { durationS, warmupS, connections, rounds: options.rounds, subscribers, events, quick: options.quick };
    console.log(JSON.stringify({ machine: machine(), options: settings, disk, coldStart, stalledResumes, runs, totalSeconds: seconds }));
  }
  return failed.length > 0 ? 1 : 0;
}

let options: BenchOptions;
try {
  options = readOptions(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(`bench: ${error.message}\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
process.once('SIGINT', () => {
  killLoadProcess();
  killTargets();
  process.exit(130);
});
process.exitCode = await main(options);
