import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onCleanup } from './helpers/cleanup.ts';
import { serviceUrl } from './helpers/services.ts';

const BENCH = join(import.meta.dirname, '..', 'scripts', 'bench.ts');

interface Row {
  figure: string;
  ours: string;
  floorValue: string;
}
interface Report {
  side: 'ours' | 'floor';
  target: string;
  count: number;
  errors: number;
}
interface BenchJson {
  runs: { name: string; comparison: Row[]; reports: Report[] }[];
}

/** Runs `npm run bench -- --quick --json` as a child process; resolves with its exit code and output. */
async function runQuickBench(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BENCH, '--quick', '--json'], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** Every row the comparison table must have for a quick run (50 subscribers). */
const ROWS = [
  'webhook 00 (new, durable): acks/s',
  'webhook 00 (new, durable): p50 ms',
  'webhook 00 (new, durable): p99 ms',
  'webhook 01 (duplicate): replies/s',
  'webhook 01 (duplicate): p99 ms',
  'banks: queries/s',
  'banks: p99 ms',
  'account with its bank: queries/s',
  'account with its bank: p99 ms',
  'collectionNotifications(first: 20): queries/s',
  'collectionNotifications(first: 20): p99 ms',
  'fan-out 50 subs: p50 ms from 00',
  'fan-out 50 subs: p99 ms from 00',
  'fan-out 50 subs: KB rss per subscriber',
  'fan-out 50 subs: KB heap per subscriber',
  'fan-out 50 subs: missed / doubled',
];

function expectEveryRowMeasured(rows: Row[], expected: string[]): void {
  expect(rows.map((row) => row.figure)).toEqual(expected);
  for (const row of rows) {
    expect(row.ours, row.figure).not.toMatch(/^(-|failed)$/);
    expect(row.floorValue, row.figure).not.toMatch(/^(-|failed)$/);
  }
  expect(rows.find((row) => row.figure.endsWith('missed / doubled'))).toMatchObject({ ours: '0 / 0', floorValue: '0 / 0' });
}

describe('npm run bench', () => {
  const databaseUrl = serviceUrl('DATABASE_URL');
  const redisUrl = serviceUrl('REDIS_URL');
  const services: Record<string, string> = databaseUrl && redisUrl ? { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } : {};

  it(
    'runs every scenario against ours and its floor in quick mode, and prints the comparison table',
    async () => {
      const { code, stdout, stderr } = await runQuickBench(services);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain('ONE PROCESS, SQLite file');
      expect(stdout).toMatch(/figure +floor +ours +floor +ours\/floor +target +met/);
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as BenchJson;

      const [sqlite, replicas] = result.runs;
      expectEveryRowMeasured(sqlite!.comparison, [...ROWS, 'cold start to /health/ready, ms (median of 1)']);
      // Each floor ran in its own process and answered every request as expected.
      const floors = sqlite!.reports.filter((report) => report.side === 'floor');
      expect(new Set(floors.map((report) => report.target))).toEqual(new Set(['bare receiver', 'bare Apollo', 'broadcaster']));
      for (const report of [...sqlite!.reports, ...(replicas?.reports ?? [])]) {
        expect(report.count, `${report.target}`).toBeGreaterThan(0);
        expect(report.errors, `${report.target}`).toBe(0);
      }

      if (services.DATABASE_URL) {
        expect(stdout).toContain('TWO REPLICAS on PostgreSQL + Redis');
        expect(replicas!.reports.every((report) => report.side === 'ours')).toBe(true);
        expectEveryRowMeasured(replicas!.comparison, ROWS);
      } else {
        expect(replicas).toBeUndefined();
      }
    },
    240_000,
  );
});
