// `npm run bench -- [options]` (scripts/bench/options.ts has them; docs/benchmarks.md says what each
// figure is). Measures the subgraph against floors in the same run, each in its own process on a
// loopback port, each scenario driven by a load process of its own: the webhook against a bare
// receiver storing the same row, `banks` and `account` against a bare Apollo subgraph, the fan-out
// against a zero-work broadcaster; and the webhook under a read storm and beside the worst read of raw
// bodies the budget allows, ours alone. The SQLite run, then
// with DATABASE_URL the PostgreSQL run (with REDIS_URL two replicas against one); --rows N runs the
// growth mode instead. Progress on stderr, one table per store on stdout; exits 1 on any error.
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { growthRuns } from './bench/growth.ts';
import { createLatencyRecorder } from './bench/latency.ts';
import { killLoadProcesses } from './bench/load-process.ts';
import { readOptions, UsageError, USAGE, type BenchOptions } from './bench/options.ts';
import { detailTables, figuresTable, growthTable, ms } from './bench/report.ts';
import { postgresRun, sqliteRun, type Run } from './bench/runs.ts';
import type { Services } from './bench/stores.ts';
import { killTargets } from './bench/targets.ts';

/** The machine in one line, for the figures' context. */
function machine(): string {
  const list = cpus();
  return `${list.length} × ${list[0]?.model.trim() ?? 'unknown'}, ${process.platform} ${process.arch}, Node ${process.version}`;
}

/** The file system under the SQLite files, and one fsync of a 4 KiB write there: what a durable commit waits for. */
function disk(parentDir: string): string {
  const dir = mkdtempSync(join(parentDir, 'bench-disk-'));
  const [latency, fd] = [createLatencyRecorder(), openSync(join(dir, 'probe'), 'w')];
  for (let i = 0, at = performance.now(); i < 50; i += 1, at = performance.now()) {
    writeSync(fd, Buffer.alloc(4096, 1), 0, 4096, i * 4096);
    fsyncSync(fd);
    latency.record(performance.now() - at);
  }
  const type = statfsSync(dir).type;
  closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
  const kinds: Record<number, string> = {
    0x01021994: 'tmpfs (fsync is free there)',
    0xef53: 'ext4',
    0x58465342: 'xfs',
    0x9123683e: 'btrfs',
    0x794c7630: 'overlayfs',
  };
  return `${kinds[type] ?? `file system 0x${type.toString(16)}`}, one fsync of 4 KiB p50 ${ms(latency.summary().p50)} ms, p99 ${ms(latency.summary().p99)} ms`;
}

/** DATABASE_URL and REDIS_URL; exits 2 when --store postgres has no DATABASE_URL. */
function services(options: BenchOptions): Services | undefined {
  const { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } = process.env;
  if (databaseUrl) return { databaseUrl, redisUrl: redisUrl || undefined };
  if (options.store !== 'postgres') return undefined;
  console.error('bench: --store postgres needs DATABASE_URL (postgres://…); REDIS_URL adds Redis pub/sub and a second replica');
  process.exit(2);
}

async function main(options: BenchOptions): Promise<number> {
  const started = performance.now();
  const parentDir = options.dir ?? tmpdir();
  const pg = services(options);
  const mode =
    process.env.NODE_ENV === 'production' ? 'NODE_ENV=production' : 'NODE_ENV unset (graphql-js and Apollo add their development checks)';
  console.log(`machine: ${machine()}; ${mode}`);
  console.log(`SQLite files on ${disk(parentDir)}; load average before: ${loadavg()[0]!.toFixed(2)}`);
  if (options.quick) console.log('--quick: a check that every scenario runs; its figures mean nothing.');
  const runs: Run[] = [];
  const print = (run: Run) => {
    const figures = options.rows === undefined ? figuresTable(run.rows) : growthTable(run.rows);
    console.log(`\n${run.title}\n\n${figures}\n\n${detailTables(run.reports)}`);
  };
  if (options.rows !== undefined) {
    for (const run of await growthRuns(options, parentDir, pg)) {
      runs.push(run);
      print(run);
    }
  } else {
    if (options.store === 'sqlite') {
      runs.push(await sqliteRun(options, parentDir));
      print(runs.at(-1)!);
    }
    if (pg) {
      runs.push(await postgresRun(options, pg, runs[0]?.reports ?? [], parentDir));
      print(runs.at(-1)!);
    }
  }
  const failed = [
    ...new Set(
      runs.flatMap((run) => run.reports.filter((r) => r.errors > 0 || r.failure).map((r) => `${r.scenario} on ${r.target} (${run.name})`)),
    ),
  ];
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `\nload average after: ${loadavg()[0]!.toFixed(2)}; ${seconds.toFixed(0)} s in all. How to read the tables: docs/benchmarks.md`,
  );
  console.log(failed.length > 0 ? `ERRORS in ${failed.join(', ')}` : 'no errors');
  if (options.json) console.log(JSON.stringify({ machine: machine(), options, runs, seconds }));
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
  killLoadProcesses();
  killTargets();
  process.exit(130);
});
process.exitCode = await main(options);
