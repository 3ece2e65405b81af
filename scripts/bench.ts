// `npm run bench -- [--duration 10] [--connections 50] [--subscribers 500] [--events 200] [--only name] [--json] [--tracing]`
// Starts the subgraph on its embedded default (sandbox bank, in-memory pub/sub, a SQLite file in a temp
// dir), drives it scenario by scenario from a separate load process (autocannon for HTTP, graphql-ws
// clients for the fan-out), and prints throughput, latency and memory. Exits 1 when a scenario saw errors.
//
// Why a separate process for the load: in this process autocannon's clients would take turns on the
// server's event loop, so every figure would be the server's cost plus the client's. A child process
// has its own loop and heap: the memory figures are the server's alone, and the loop measurements see
// only server work. On a 2-core machine the two still share the CPU, which the output says.
import { cpus, loadavg } from 'node:os';
import { startMonitors, sampleMemory, type Monitors } from './bench/monitors.ts';
import { readOptions, UsageError, USAGE, type BenchOptions } from './bench/options.ts';
import type { LoadJob, LoadResult, ScenarioName } from './bench/protocol.ts';
import { clientTable, LEGEND, memoryTable, serverTable, table, type MemoryReport, type ScenarioReport } from './bench/report.ts';
import { startBenchTracing, tracingCostTable } from './bench/tracing.ts';
import { activeSubscriptions, killLoadProcess, runInLoadProcess, startBenchApp, waitForSubscriptions, type BenchApp } from './bench/server.ts';

/** How long the fan-out's subscribers may take to be counted live by the app. */
const SUBSCRIBE_TIMEOUT_MS = 60_000;

function machine() {
  const list = cpus();
  return { cpus: list.length, model: list[0]?.model.trim() ?? 'unknown', node: process.version, platform: `${process.platform} ${process.arch}` };
}

function printHeader(options: BenchOptions, bench: BenchApp): void {
  const m = machine();
  console.log(`machine: ${m.cpus} × ${m.model}, ${m.platform}, Node ${m.node}`);
  const mode = process.env.NODE_ENV === 'production' ? 'NODE_ENV=production' : 'development (NODE_ENV is not production: graphql-js and Apollo add their checks)';
  console.log(`subgraph: ${bench.baseUrl}, sandbox bank in the same process, in-memory pub/sub; ${mode}`);
  const fsync = bench.fsyncMs;
  console.log(`store: ${bench.storePath} on ${bench.filesystem} (SQLite WAL, synchronous=FULL)`);
  console.log(`fsync of a 4 KiB write there: p50 ${fsync.p50.toFixed(2)} ms, p99 ${fsync.p99.toFixed(2)} ms, max ${fsync.max.toFixed(2)} ms (50 tries)`);
  console.log(
    `load: a separate process per scenario (autocannon; graphql-ws clients), sharing the ${m.cpus} cores with the server; ` +
      (options.warmupS > 0 ? `not measured: the first ${options.warmupS} s of each HTTP run, the fan-out's first 10 events` : 'no warm-up'),
  );
  console.log(`load average before: ${loadavg()[0]!.toFixed(2)} (1 min; above 0, other processes want the cores too)`);
  console.log('Figures are for comparing within one run (as ratios): the machine is shared and noisy.\n');
}

function progressLine(scenario: ScenarioName, options: BenchOptions): string {
  return scenario === 'fanout'
    ? `fanout: ${options.subscribers} subscribers × ${options.events} events…`
    : `${scenario}: ${options.durationS} s at ${options.connections} connections…`;
}

/** Runs one scenario in a load process, bracketing it with the server side's measurements. */
async function runScenario(scenario: ScenarioName, options: BenchOptions, bench: BenchApp, monitors: Monitors): Promise<ScenarioReport> {
  const { durationS, warmupS, connections, subscribers, events } = options;
  const job: LoadJob = { scenario, baseUrl: bench.baseUrl, durationS, warmupS, connections, subscribers, events };
  const baseline = await activeSubscriptions(bench.app);
  monitors.begin();
  try {
    const result = await runInLoadProcess(job, {
      onMeasuring: () => monitors.begin(),
      awaitSubscribers: (count) => waitForSubscriptions(bench.app, baseline + count, SUBSCRIBE_TIMEOUT_MS),
    });
    return { ...result, server: monitors.end(), failure: undefined };
  } catch (error) {
    monitors.end();
    return { ...failedResult(scenario), server: undefined, failure: (error as Error).message };
  }
}

function failedResult(scenario: ScenarioName): LoadResult {
  const latencyMs = { p50: 0, p90: 0, p99: 0, max: 0 };
  return { scenario, load: '-', count: 0, seconds: 0, perSecond: 0, latencyMs, non2xx: 0, errors: 1, outcomes: {}, loadCpuCores: 0 };
}

function describeDone(report: ScenarioReport): string {
  if (report.failure) return `  failed: ${report.failure}`;
  const unit = report.scenario === 'fanout' ? 'deliveries/s' : 'req/s';
  return `  ${report.perSecond.toFixed(0)} ${unit}, p99 ${report.latencyMs.p99.toFixed(2)} ms, ${report.errors} errors`;
}

/** Memory after the load: after a forced GC when node runs with --expose-gc, so leaks show. */
async function memoryAfter(): Promise<{ sample: ReturnType<typeof sampleMemory>; forcedGc: boolean }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  // Let closing sockets and finished requests drop their last references first.
  await new Promise((resolve) => setTimeout(resolve, 500));
  if (gc) {
    gc();
    gc();
  }
  return { sample: sampleMemory(), forcedGc: gc !== undefined };
}

/** The same scenarios again with tracing on; rows labelled "<scenario> +tracing". */
async function runTraced(options: BenchOptions, bench: BenchApp, monitors: Monitors): Promise<{ reports: ScenarioReport[]; note: string }> {
  const tracing = await startBenchTracing();
  const reports: ScenarioReport[] = [];
  let sink: { requests: number; bytes: number };
  try {
    for (const scenario of options.scenarios) {
      process.stderr.write(`${progressLine(scenario, options)} (tracing on)\n`);
      const report = await runScenario(scenario, options, bench, monitors);
      process.stderr.write(`${describeDone(report)}\n`);
      // The label is for the tables only; the scenario run was the named one.
      reports.push({ ...report, scenario: `${scenario} +tracing` as ScenarioName });
    }
  } finally {
    sink = await tracing.stop();
  }
  const received = `the sink received ${sink.requests} exports, ${(sink.bytes / 1024 / 1024).toFixed(1)} MiB`;
  return { reports, note: `+tracing: ${tracing.description}; ${received}` };
}

async function main(options: BenchOptions): Promise<number> {
  const bench = await startBenchApp(options.dir);
  const stop = () => {
    killLoadProcess();
    void bench.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  try {
    printHeader(options, bench);
    const monitors = startMonitors(bench.timedStore);
    const before = sampleMemory();
    const reports: ScenarioReport[] = [];
    for (const scenario of options.scenarios) {
      process.stderr.write(`${progressLine(scenario, options)}\n`);
      const report = await runScenario(scenario, options, bench, monitors);
      process.stderr.write(`${describeDone(report)}\n`);
      reports.push(report);
    }
    const tracing = options.tracing ? await runTraced(options, bench, monitors) : undefined;
    if (tracing) reports.push(...tracing.reports);
    const after = await memoryAfter();
    const memory: MemoryReport = { before, peak: monitors.peak(), after: after.sample, forcedGc: after.forcedGc };
    monitors.stop();
    print(options, reports, memory, bench);
    if (tracing) console.log(`\n${tracingCostTable(reports, table)}\n${tracing.note}`);
    return reports.some((report) => report.errors > 0) ? 1 : 0;
  } finally {
    process.off('SIGINT', stop);
    await bench.close();
  }
}

function print(options: BenchOptions, reports: ScenarioReport[], memory: MemoryReport, bench: BenchApp): void {
  console.log(`\n${clientTable(reports)}\n\n${serverTable(reports)}\n\n${memoryTable(memory)}\n\n${LEGEND}`);
  const failed = reports.filter((report) => report.errors > 0).map((report) => report.scenario);
  console.log(`\nload average after: ${loadavg()[0]!.toFixed(2)} (1 min; the bench alone adds about 1.5, more means other processes competed for the cores)`);
  console.log(failed.length > 0 ? `ERRORS in ${failed.join(', ')}` : 'no errors');
  if (options.json) {
    const { durationS, warmupS, connections, subscribers, events } = options;
    const store = { filesystem: bench.filesystem, fsyncMs: bench.fsyncMs };
    const settings = { durationS, warmupS, connections, subscribers, events };
    console.log(JSON.stringify({ machine: machine(), options: settings, store, scenarios: reports, memory }));
  }
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
process.exitCode = await main(options);
