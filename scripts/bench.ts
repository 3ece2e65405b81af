// `npm run bench -- [--store sqlite|postgres] [--duration 5] [--connections 100] [--rounds 3] [--subscribers 1000,10000]
//   [--events 30] [--only …] [--quick] [--tracing] [--json]`, or `npm run bench -- --rows 1000000` (the growth mode),
//   or `npm run bench -- --insert-cost` (the store's CPU per row against the floor's)
// Measures the subgraph against floors, in the same run: a bare durable receiver for the webhook (on
// SQLite, and on PostgreSQL for the PostgreSQL run), a bare Apollo subgraph for the queries and the
// cold start, a zero-work graphql-transport-ws broadcaster for the fan-out. Ours and every floor run
// in their own process on a loopback port; each scenario is driven by its own load process
// (autocannon; graphql-ws clients), so no figure includes the load generator's work on the server's
// event loop. Prints one comparison table per run (ours, floor, ratio, the issue's target), then the
// details. With DATABASE_URL set, the PostgreSQL run follows the SQLite one (with REDIS_URL: two
// replicas against one too); --store postgres runs it alone. --rows N measures how the figures move
// between a small store and one of N notifications instead. Exits 1 when a scenario saw errors.
import { cpus, loadavg, tmpdir } from 'node:os';
import { measureColdStarts, type ColdStart } from './bench/cold-start.ts';
import { comparisonRows, comparisonTable, FLOORS_LEGEND, replicaRows, replicaTable, type ComparisonRow, type ReplicaRow } from './bench/compare.ts';
import { probeDisk, type DiskReport } from './bench/disk.ts';
import { GROWTH_LEGEND, growthRuns, type GrowthRow } from './bench/growth.ts';
import { INSERT_COST_LEGEND, insertCostTable, measureInsertCost, type InsertCostRow } from './bench/insert-cost.ts';
import { killLoadProcess } from './bench/load-process.ts';
import { readOptions, UsageError, USAGE, type BenchOptions } from './bench/options.ts';
import { clientTable, LEGEND, serverTable } from './bench/report.ts';
import { postgresColdStarts, postgresRun, sqliteRun, tracingRun, type PostgresServices } from './bench/runs.ts';
import type { ScenarioReport } from './bench/suite.ts';
import { killTargets } from './bench/targets.ts';
import { measureStalledResumes, stalledResumesTable, type StalledResumes } from './bench/stalled-resumes.ts';

function machine() {
  const list = cpus();
  return { cpus: list.length, model: list[0]?.model.trim() ?? 'unknown', node: process.version, platform: `${process.platform} ${process.arch}` };
}

function printHeader(disk: DiskReport, options: BenchOptions): void {
  const m = machine();
  console.log(`machine: ${m.cpus} × ${m.model}, ${m.platform}, Node ${m.node}; ${new Date().toISOString().slice(0, 16)}Z`);
  const mode = process.env.NODE_ENV === 'production' ? 'NODE_ENV=production' : 'development (NODE_ENV is not production: graphql-js and Apollo add their checks)';
  console.log(`ours: the subgraph (createApp) in its own process, sandbox bank in that process; ${mode}`);
  if (options.store === 'sqlite') console.log(`SQLite files on ${disk.filesystem} (WAL, synchronous=FULL); one fsync of a 4 KiB write there: p50 ${disk.fsyncMs.p50.toFixed(2)} ms, p99 ${disk.fsyncMs.p99.toFixed(2)} ms`);
  const load = options.insertCost ? 'none: each store is written from this process' : `a separate process per run, sharing the ${m.cpus} cores with the server it drives`;
  console.log(`load: ${load}; load average before: ${loadavg()[0]!.toFixed(2)}`);
  console.log('Compare within one run (the ratios): the machine is shared and noisy.\n');
}

function printRun(title: string, reports: ScenarioReport[], comparison: ComparisonRow[], floorNote = ''): void {
  // --only stalled-resumes: nothing of this run was measured, so no empty table.
  if (comparison.length === 0 && reports.length === 0) return;
  console.log(`\n${title}\n\n${comparisonTable(comparison, floorNote)}`);
  if (reports.length > 0) console.log(`\n${clientTable(reports)}\n\n${serverTable(reports)}`);
}

interface Run {
  name: string;
  reports: ScenarioReport[];
  comparison: ComparisonRow[];
  /** The PostgreSQL run with Redis: two replicas against one. */
  replicas?: ReplicaRow[];
  /** The growth mode: each figure at the baseline and at --rows. */
  growth?: GrowthRow[];
}

/** The insert-cost mode: prints its table; answers it for --json. */
async function insertCostRun(options: BenchOptions, parentDir: string, services: PostgresServices | undefined): Promise<InsertCostRow[]> {
  const rows = await measureInsertCost({
    rounds: options.rounds,
    rowsPerRound: options.insertCostRows,
    parentDir,
    sqlite: options.store === 'sqlite',
    databaseUrl: services?.databaseUrl,
    onProgress: (line) => process.stderr.write(`${line}\n`),
  });
  console.log(`\nINSERT COST: CPU per stored notification, no HTTP\n\n${insertCostTable(rows)}`);
  return rows;
}

/** The first run, on SQLite, with its cold start. */
async function sqliteFirst(
  options: BenchOptions,
  parentDir: string,
): Promise<{ run: Run; coldStart: ColdStart | undefined; stalledResumes: StalledResumes | undefined }> {
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
  const comparison = comparisonRows(sqlite.filter((r) => r.side === 'ours'), floors, coldStart, 'sqlite');
  printRun('ONE PROCESS, SQLite file + in-memory pub/sub (the embedded default)', sqlite, comparison);
  if (stalledResumes) console.log(`\nSTALLED RESUMES (ours alone, SQLite file + in-memory pub/sub)\n\n${stalledResumesTable(stalledResumes)}`);
  return { run: { name: 'sqlite', reports: sqlite, comparison }, coldStart, stalledResumes };
}

/** The PostgreSQL run: ours against the PostgreSQL receiver (other floors from `earlier` when it has them), and two replicas against one. */
async function postgresNext(options: BenchOptions, services: PostgresServices, earlier: ScenarioReport[], parentDir: string): Promise<Run> {
  const reports = await postgresRun(options, services, earlier);
  let coldStart: ColdStart | undefined;
  if (options.store === 'postgres' && options.selected.includes('cold-start')) {
    process.stderr.write(`cold start on PostgreSQL (a new schema each time) and the bare Apollo subgraph, ${options.coldStarts} × each…\n`);
    coldStart = await postgresColdStarts(options, services.databaseUrl, parentDir);
  }
  const floors = [...reports, ...earlier].filter((report) => report.side === 'floor');
  const ours = reports.filter((report) => report.side === 'ours');
  const comparison = comparisonRows(ours, floors, coldStart, 'postgres');
  const pubsub = services.redisUrl ? 'Redis pub/sub' : 'in-memory pub/sub';
  const others = earlier.some((r) => r.side === 'floor' && !r.scenario.startsWith('webhook')) ? '; queries and fan-out against the first run\'s floors' : '';
  printRun(`ONE PROCESS on PostgreSQL + ${pubsub}: the webhook against the PostgreSQL receiver${others}`, reports, comparison);
  const two = reports.filter((report) => report.side === 'replicas');
  if (two.length === 0) return { name: 'postgres', reports, comparison };
  const replicas = replicaRows(ours, two, floors);
  console.log(`\nTWO REPLICAS AGAINST ONE on PostgreSQL + Redis (HTTP load and subscribers spread over both; webhook posts for the fan-out to the first)\n\n${replicaTable(replicas)}`);
  return { name: 'postgres', reports, comparison, replicas };
}

/** The PostgreSQL and Redis the runs may use, from the environment; exits 2 when --store postgres has no DATABASE_URL. */
function postgresServices(options: BenchOptions): PostgresServices | undefined {
  const { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } = process.env;
  if (!databaseUrl) {
    if (options.store !== 'postgres') return undefined;
    console.error('bench: --store postgres needs DATABASE_URL (postgres://…); REDIS_URL adds Redis pub/sub and a second replica');
    process.exit(2);
  }
  return { databaseUrl, redisUrl: redisUrl || undefined };
}

async function main(options: BenchOptions): Promise<number> {
  const started = performance.now();
  const parentDir = options.dir ?? tmpdir();
  const disk = probeDisk(parentDir);
  const services = postgresServices(options);
  printHeader(disk, options);
  const runs: Run[] = [];
  let coldStart: ColdStart | undefined;
  let stalledResumes: StalledResumes | undefined;
  let insertCost: InsertCostRow[] | undefined;
  if (options.insertCost) {
    insertCost = await insertCostRun(options, parentDir, services);
  } else if (options.rows !== undefined) {
    for (const run of await growthRuns(options, parentDir, services)) runs.push({ ...run, comparison: [] });
  } else {
    if (options.store === 'sqlite') {
      const first = await sqliteFirst(options, parentDir);
      runs.push(first.run);
      coldStart = first.coldStart;
      stalledResumes = first.stalledResumes;
      if (options.tracing) runs.push({ name: 'tracing-on', reports: await tracingRun(options, parentDir, first.run.reports), comparison: [] });
    }
    if (services) runs.push(await postgresNext(options, services, runs[0]?.reports ?? [], parentDir));
  }

  const all = runs.flatMap((run) => run.reports);
  const failed = [...new Set(all.filter((report) => report.errors > 0).map((report) => `${report.scenario} on ${report.target}`))];
  if (stalledResumes && stalledResumes.closes['1013'] !== stalledResumes.subscribers) failed.push('stalled-resumes (not every one closed with 1013)');
  const seconds = (performance.now() - started) / 1000;
  console.log(`\n${insertCost ? INSERT_COST_LEGEND : options.rows === undefined ? `${FLOORS_LEGEND}\n${LEGEND}` : GROWTH_LEGEND}`);
  console.log(`\nload average after: ${loadavg()[0]!.toFixed(2)}; total time ${seconds.toFixed(0)} s`);
  console.log(failed.length > 0 ? `ERRORS in ${failed.join(', ')}` : 'no errors');
  if (options.json) {
    const { durationS, warmupS, connections, subscribers, events, store, rows } = options;
    const settings = { store, rows, durationS, warmupS, connections, rounds: options.rounds, subscribers, events, quick: options.quick };
    console.log(JSON.stringify({ machine: machine(), options: settings, disk, coldStart, stalledResumes, insertCost, runs, totalSeconds: seconds }));
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
