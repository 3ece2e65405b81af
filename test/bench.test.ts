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
  side: 'ours' | 'replicas' | 'floor';
  scenario: string;
  target: string;
  count: number;
  errors: number;
}
interface ReplicaRow {
  figure: string;
  one: string;
  two: string;
  floorValue: string;
}
interface GrowthRow {
  figure: string;
  baseline: string;
  grown: string;
  ratio: string;
}
interface SummaryRow {
  figure: string;
  ours: string;
  floor: string;
  ratio: string;
  target: string;
}
interface BenchJson {
  runs: { name: string; comparison: Row[]; reports: Report[]; replicas?: ReplicaRow[]; growth?: GrowthRow[]; summaries?: SummaryRow[] }[];
}

/** Runs `npm run bench -- --quick --json …` as a child process; resolves with its exit code and output. */
async function runQuickBench(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BENCH, '--quick', '--json', ...args], {
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

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as BenchJson;

function expectNoErrors(reports: Report[]): void {
  for (const report of reports) {
    expect(report.count, `${report.scenario} on ${report.target}`).toBeGreaterThan(0);
    expect(report.errors, `${report.scenario} on ${report.target}`).toBe(0);
  }
}

function expectEveryRowMeasured(rows: Row[], expected: string[]): void {
  expect(rows.map((row) => row.figure)).toEqual(expected);
  for (const row of rows) {
    expect(row.ours, row.figure).not.toMatch(/^(-|failed)$/);
    expect(row.floorValue, row.figure).not.toMatch(/^(-|failed)$/);
  }
  const deliveries = rows.find((row) => row.figure.endsWith('missed / doubled'));
  if (expected.some((figure) => figure.startsWith('fan-out'))) expect(deliveries).toMatchObject({ ours: '0 / 0', floorValue: '0 / 0' });
}

const databaseUrl = serviceUrl('DATABASE_URL');
const redisUrl = serviceUrl('REDIS_URL');

describe('npm run bench', () => {
  const services: Record<string, string> = databaseUrl && redisUrl ? { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } : {};

  it(
    'runs every scenario against ours and its floor in quick mode, and prints the comparison table',
    async () => {
      const { code, stdout, stderr } = await runQuickBench(services);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain('ONE PROCESS, SQLite file');
      expect(stdout).toMatch(/figure +floor +ours +floor +ours\/floor +target +met/);
      const [sqlite, postgres] = lastJson(stdout).runs;
      expectEveryRowMeasured(sqlite!.comparison, [...ROWS, 'cold start to /health/ready, ms (median of 1)']);
      // Each floor ran in its own process and answered every request as expected.
      const floors = sqlite!.reports.filter((report) => report.side === 'floor');
      expect(new Set(floors.map((report) => report.target))).toEqual(new Set(['bare receiver', 'bare Apollo', 'broadcaster']));
      expectNoErrors([...sqlite!.reports, ...(postgres?.reports ?? [])]);

      if (services.DATABASE_URL) {
        // One replica against the PostgreSQL receiver (the other floors are the first run's), then two against one.
        expect(stdout).toContain('ONE PROCESS on PostgreSQL + Redis pub/sub');
        expect(stdout).toContain('TWO REPLICAS AGAINST ONE on PostgreSQL + Redis');
        expect(postgres!.reports.filter((report) => report.side === 'floor').map((report) => report.target)).toEqual([
          'bare receiver (PostgreSQL)',
          'bare receiver (PostgreSQL)',
        ]);
        expectEveryRowMeasured(postgres!.comparison, ROWS);
        expect(postgres!.comparison.find((row) => row.figure === ROWS[0])).toMatchObject({ floor: 'bare receiver (PostgreSQL)', target: '≥ 0.9× floor' });
        expect(postgres!.replicas!.map((row) => row.figure)).toEqual(ROWS);
        for (const row of postgres!.replicas!) expect([row.one, row.two, row.floorValue], row.figure).not.toContainEqual(expect.stringMatching(/^(-|failed|)$/));
      } else {
        expect(postgres).toBeUndefined();
      }
    },
    300_000,
  );

  it.runIf(databaseUrl)(
    'runs --store postgres alone: the webhook against the PostgreSQL receiver, and the cold start on PostgreSQL',
    async () => {
      const { code, stdout, stderr } = await runQuickBench({ DATABASE_URL: databaseUrl! }, ['--store', 'postgres', '--only', 'webhook-00,webhook-01,cold-start']);
      expect(code, stderr).toBe(0);
      expect(stdout).not.toContain('ONE PROCESS, SQLite');
      expect(stdout).toContain('ONE PROCESS on PostgreSQL + in-memory pub/sub');
      const [postgres, more] = lastJson(stdout).runs;
      expect(more).toBeUndefined();
      expectEveryRowMeasured(postgres!.comparison, [...ROWS.slice(0, 5), 'cold start to /health/ready, ms (median of 1)']);
      expect(postgres!.replicas).toBeUndefined();
      expectNoErrors(postgres!.reports);
    },
    120_000,
  );

  it(
    'runs --floor-row ours: the webhook against receivers that store our row, judging no target against them',
    async () => {
      const env: Record<string, string> = databaseUrl ? { DATABASE_URL: databaseUrl } : {};
      const { code, stdout, stderr } = await runQuickBench(env, ['--floor-row', 'ours', '--only', 'webhook-00']);
      expect(code, stderr).toBe(0);
      const runs = lastJson(stdout).runs;
      const expected = [['bare receiver with our row', runs[0]!], ...(databaseUrl ? [['bare receiver (PostgreSQL) with our row', runs[1]!] as const] : [])] as const;
      expect(runs).toHaveLength(expected.length);
      for (const [floor, run] of expected) {
        expect(run.comparison.find((row) => row.figure === ROWS[0])).toMatchObject({ floor, target: '', met: '' });
        expect(run.reports.filter((report) => report.side === 'floor').map((report) => report.target)).toContain(floor);
        expectNoErrors(run.reports);
      }
    },
    120_000,
  );

  it('refuses --store postgres without DATABASE_URL, naming it', async () => {
    const { code, stderr } = await runQuickBench({}, ['--store', 'postgres']);
    expect(code).toBe(2);
    expect(stderr).toContain('--store postgres needs DATABASE_URL');
  });

  it(
    'measures the growth mode on a small --rows: every figure at the baseline and at N rows, and the summaries against a plain SUM, on each store',
    async () => {
      const env: Record<string, string> = databaseUrl ? { DATABASE_URL: databaseUrl } : {};
      const { code, stdout, stderr } = await runQuickBench(env, ['--rows', '2000']);
      expect(code, stderr).toBe(0);
      expect(stderr).toMatch(/fill: 501 of 501 notifications \(\d[\d,]* rows\/s\)/);
      const runs = lastJson(stdout).runs;
      expect(runs.map((run) => run.name)).toEqual(databaseUrl ? ['growth-sqlite', 'growth-postgres'] : ['growth-sqlite']);
      for (const run of runs) {
        expect(stdout).toContain(`GROWTH on ${run.name === 'growth-sqlite' ? 'SQLite' : 'PostgreSQL'}`);
        expect(run.growth!.map((row) => row.figure)).toEqual(GROWTH_ROWS);
        for (const row of run.growth!) expect([row.baseline, row.grown, row.ratio], `${run.name}: ${row.figure}`).not.toContainEqual(expect.stringMatching(/^(-|NaN)$/));
        // The baseline holds the resume's 500 and one more; N rows at least 2,000.
        expect(run.growth![0]).toMatchObject({ baseline: '501' });
        expect(Number(run.growth![0]!.grown.replace(/,/g, ''))).toBeGreaterThanOrEqual(2_000);
        expectSummariesMeasured(run.summaries!, run.reports);
        expect(stdout).toContain(`SUMMARIES on ${run.name === 'growth-sqlite' ? 'SQLite' : 'PostgreSQL'} at`);
        expectNoErrors(run.reports);
      }
    },
    180_000,
  );
});

const SUMMARY_FIGURES = [
  'notifications summed',
  'lone request, p50 ms',
  'lone request, p99 ms',
  'under load, queries/s',
  'under load, p50 ms',
  'under load, p99 ms',
];

/**
 * Both summaries measured on ours and on the plain SUM, over notifications that are there (each side's
 * every reply carried the count and sum both gave when asked first: expectNoErrors checks that).
 */
function expectSummariesMeasured(rows: SummaryRow[], reports: Report[]): void {
  const questions = ['a day of one busy account', 'a month of every account'];
  expect(rows.map((row) => row.figure)).toEqual(
    questions.flatMap((question) => SUMMARY_FIGURES.map((figure) => expect.stringMatching(new RegExp(`^${question} \\(.*\\): ${figure}$`)))),
  );
  for (const row of rows) expect([row.ours, row.floor], row.figure).not.toContainEqual(expect.stringMatching(/^(-|NaN|)$/));
  for (const row of rows.filter((r) => r.figure.endsWith('notifications summed'))) expect(Number(row.ours.replace(/,/g, ''))).toBeGreaterThan(0);
  expect(rows.filter((row) => row.target !== '').map((row) => [row.figure.replace(/ \(.*\)/, ''), row.target])).toEqual(
    questions.map((question) => [`${question}: lone request, p50 ms`, '< 50 ms']),
  );
  const summaries = reports.filter((report) => report.scenario === 'query-summary');
  // Per question: a lone request and the load, each on ours and on the floor.
  expect(summaries.map((report) => report.target)).toEqual(Array(4).fill(['ours', 'plain SUM']).flat());
}

const GROWTH_ROWS = [
  'notifications stored (collection_store_notifications)',
  'store bytes per notification (collection_store_bytes)',
  'start-up to /health/ready, ms',
  'page deep in an account: queries/s',
  'page deep in an account: p99 ms',
  'resume 500 back: events/s',
  'resume: server rss peak MiB',
  'resume: server heap peak MiB',
  'webhook 00: acks/s',
  'webhook 00: p99 ms',
];
