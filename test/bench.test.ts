/**
 * `npm run bench -- --quick` end to end: every scenario runs against ours and its floor and every
 * figure is measured, with no error. What the figures are is the bench's business, not a test's.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onCleanup } from './helpers/cleanup.ts';
import { serviceUrl } from './helpers/services.ts';

const BENCH = join(import.meta.dirname, '..', 'scripts', 'bench.ts');

interface Row {
  figure: string;
  floor: string;
  ours: string;
  two?: string;
  floorValue: string;
  target: string;
}
interface Report {
  scenario: string;
  target: string;
  side: string;
  count: number;
  errors: number;
}
interface BenchJson {
  runs: { name: string; rows: Row[]; reports: Report[] }[];
}

/** Runs `npm run bench -- --quick --json …`; resolves with its exit code and output. */
async function runQuickBench(env: Record<string, string>, args: string[] = []) {
  const child = spawn(process.execPath, [BENCH, '--quick', '--json', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onCleanup(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGINT')));
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr, json: () => JSON.parse(stdout.trim().split('\n').at(-1)!) as BenchJson };
}

/** The figures of a quick run (50 subscribers), with a floor each. */
const FIGURES = [
  'webhook 00 (new, durable): acks/s',
  'webhook 00 (new, durable): p50 ms',
  'webhook 00 (new, durable): p99 ms',
  'webhook 01 (duplicate): replies/s',
  'webhook 01 (duplicate): p99 ms',
  'webhook 02 (refused, kept): replies/s',
  'webhook 02 (refused, kept): p99 ms',
  'banks: queries/s',
  'banks: p99 ms',
  'account with its bank: queries/s',
  'account with its bank: p99 ms',
  'fan-out 50 subs: p50 ms from 00',
  'fan-out 50 subs: p99 ms from 00',
  'fan-out 50 subs: KB rss per subscriber',
  'fan-out 50 subs: KB heap per subscriber',
  'fan-out 50 subs: missed / doubled',
];
const [WEBHOOK, BANKS, ACCOUNT, FANOUT] = [FIGURES.slice(0, 7), FIGURES.slice(7, 9), FIGURES.slice(9, 11), FIGURES.slice(11)];
/** `banks`' CPU per query; with a caller's token, against bare Apollo; and the same on the long list, against bare Apollo serving it. */
const BANKS_CPU = 'banks: server CPU ms per query';
const BANKS_WITH_TOKEN = ['banks with a token: queries/s', 'banks with a token: server CPU ms per query'];
const LONG_LIST = [
  'banks (600 banks): queries/s',
  'banks (600 banks): p99 ms',
  'banks (600 banks): server CPU ms per query',
  'banks (600 banks) with a token: queries/s',
  'banks (600 banks) with a token: server CPU ms per query',
];
/** The response cache's hit ratio over each `banks` run: with and without a token (the SQLite run), or on one replica and two. */
const HITS = 'banks: answered from memory';
const HITS_BOTH = `${HITS} (without / with a token)`;
const LONG_LIST_HITS = 'banks (600 banks): answered from memory (without / with a token)';
/** `account` with a caller's token, against ours without authentication. */
const ACCOUNT_WITH_TOKEN = 'account with its bank with a token: queries/s';
const STORM = [
  'webhook 00 at 100/s under a read storm: acks/s',
  'webhook 00 at 100/s under a read storm: p50 ms',
  'webhook 00 at 100/s under a read storm: p99 ms',
  'webhook 00 at 100/s under a read storm: max ms',
  'read storm: year-long summaries answered/s',
  'read storm: 100-alias documents answered / refused / failed',
];
/** The webhook beside the most expensive read of raw bodies the default budget allows. */
const RAW = [
  'webhook 00 at 100/s beside the worst raw-body read: p99 ms',
  'webhook 00 at 100/s beside the worst raw-body read: max ms',
  'webhook 00 at 100/s beside the worst raw-body read: server peak rss MiB',
  'worst raw-body read (230 bodies, 25 units): answered/s',
  'worst raw-body read: answer MiB',
];
/** Confirmation with the bank: ours with it on against ours with it off, and what it confirms. */
const CONFIRMATION = [
  'webhook 00 with confirmation on: acks/s',
  'webhook 00 with confirmation on: p99 ms',
  'confirmations/s during the webhook load',
  'confirmations/s draining what it left PENDING',
  '00 to arrival on the confirmed stream at 50/s: p50 ms',
  '00 to arrival on the confirmed stream at 50/s: p99 ms',
  'confirmations/s, bank answering in 200 ms, 1 replica',
];
/** On PostgreSQL, the pace against the slow bank on two replicas too. */
const TWO_CONFIRMING = 'confirmations/s, bank answering in 200 ms, 2 replicas';

function expectMeasured(rows: Row[], figures: string[], withFloor: string[]): void {
  expect(rows.map((row) => row.figure)).toEqual(figures);
  for (const row of rows) expect(row.ours, row.figure).not.toMatch(/^(-|failed|NaN)$/);
  for (const row of rows.filter((r) => withFloor.includes(r.figure))) expect(row.floorValue, row.figure).not.toMatch(/^(-|failed|NaN)$/);
  const deliveries = rows.find((row) => row.figure.endsWith('missed / doubled'));
  if (deliveries) expect(deliveries).toMatchObject({ ours: '0 / 0', floorValue: '0 / 0' });
}

function expectNoErrors(reports: Report[]): void {
  for (const report of reports) expect(report.errors, `${report.scenario} on ${report.target}`).toBe(0);
  for (const report of reports.filter((r) => r.scenario !== 'storm-reads'))
    expect(report.count, `${report.scenario} on ${report.target}`).toBeGreaterThan(0);
}

const databaseUrl = serviceUrl('DATABASE_URL');
const redisUrl = serviceUrl('REDIS_URL');

describe('npm run bench', () => {
  const services: Record<string, string> = databaseUrl && redisUrl ? { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } : {};

  it('runs every scenario against ours and its floor on each store, and the webhook under a read storm and beside the worst raw-body read', async () => {
    const { code, stdout, stderr, json } = await runQuickBench(services);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(
      /\|\s*figure\s*\|\s*against\s*\|\s*ours\s*(\|\s*ours ×2\s*)?\|\s*floor\s*\|\s*ours\/floor\s*\|\s*target\s*\|\s*met\s*\|/,
    );
    const [sqlite, postgres] = json().runs;
    const banks = [...BANKS, BANKS_CPU, ...BANKS_WITH_TOKEN, HITS_BOTH, ...LONG_LIST, LONG_LIST_HITS];
    const banksWithFloor = [BANKS_CPU, ...BANKS_WITH_TOKEN, ...LONG_LIST];
    expectMeasured(
      sqlite!.rows,
      [...WEBHOOK, ...banks, ...ACCOUNT, ACCOUNT_WITH_TOKEN, ...FANOUT, ...STORM, ...RAW, ...CONFIRMATION],
      [...FIGURES, ...banksWithFloor, ACCOUNT_WITH_TOKEN, ...RAW.slice(0, 3), ...CONFIRMATION.slice(0, 2)],
    );
    const figure = (rows: Row[], name: string) => rows.find((row) => row.figure === name);
    expect(figure(sqlite!.rows, BANKS_WITH_TOKEN[0]!)).toMatchObject({ floor: 'bare Apollo', target: '≥ 1.2× floor' });
    expect(figure(sqlite!.rows, LONG_LIST[3]!)).toMatchObject({ floor: 'bare Apollo (600 banks)', target: '≥ 1.2× floor' });
    expect(figure(sqlite!.rows, ACCOUNT_WITH_TOKEN)).toMatchObject({ floor: 'ours without a token', target: '≥ 0.9× ours without' });
    expect(figure(sqlite!.rows, CONFIRMATION[0]!)).toMatchObject({ floor: 'confirmation off', target: '≥ 0.95× off' });
    expect(figure(sqlite!.rows, CONFIRMATION.at(-1)!)).toMatchObject({ target: '≥ 50 /s' });
    expect(figure(sqlite!.rows, RAW[2]!)).toMatchObject({ floor: 'alone', target: '≤ 768 MiB (the manifests’ limit)' });
    for (const hits of [HITS_BOTH, LONG_LIST_HITS]) expect(figure(sqlite!.rows, hits)!.ours).toMatch(/^\d+\.\d\d% \/ \d+\.\d\d%$/);
    expect(new Set(sqlite!.reports.filter((r) => r.side === 'token').map((r) => `${r.scenario} on ${r.target}`))).toEqual(
      new Set([
        'query-banks on ours with a token',
        'query-banks-600 on ours with a token (600 banks)',
        'query-account on ours with a token',
      ]),
    );
    const floors = new Set(sqlite!.reports.filter((r) => r.side === 'floor').map((r) => r.target));
    expect(floors).toEqual(new Set(['bare receiver', 'bare Apollo', 'bare Apollo (600 banks)', 'broadcaster']));
    expectNoErrors(sqlite!.reports);
    if (!services.DATABASE_URL) return expect(postgres).toBeUndefined();
    // The webhook against the PostgreSQL floor, the rest against the first run's; each on one replica and on two.
    expectMeasured(
      postgres!.rows,
      [...WEBHOOK, ...BANKS, BANKS_CPU, HITS, ...ACCOUNT, ...FANOUT, ...STORM, ...RAW, ...CONFIRMATION, TWO_CONFIRMING],
      [...FIGURES, BANKS_CPU, ...RAW.slice(0, 3), ...CONFIRMATION.slice(0, 2)],
    );
    expect(figure(postgres!.rows, HITS)).toMatchObject({
      ours: expect.stringMatching(/^\d+\.\d\d%$/),
      two: expect.stringMatching(/^\d+\.\d\d%$/),
    });
    expect(postgres!.rows.find((row) => row.figure === FIGURES[0])).toMatchObject({
      floor: 'bare receiver (PostgreSQL)',
      target: '≥ 0.85× floor',
    });
    for (const row of postgres!.rows.filter((r) => FIGURES.includes(r.figure))) expect(row.two, row.figure).toMatch(/^-?\d/);
    expectNoErrors(postgres!.reports);
  }, 600_000);

  it.runIf(databaseUrl)(
    'runs --store postgres alone',
    async () => {
      const { code, stderr, json } = await runQuickBench({ DATABASE_URL: databaseUrl! }, [
        '--store',
        'postgres',
        '--only',
        'webhook-00,webhook-01',
      ]);
      expect(code, stderr).toBe(0);
      const [postgres, more] = json().runs;
      expect([postgres!.name, more]).toEqual(['postgres', undefined]);
      expectMeasured(postgres!.rows, FIGURES.slice(0, 5), FIGURES.slice(0, 5));
      expectNoErrors(postgres!.reports);
    },
    120_000,
  );

  it('refuses --store postgres without DATABASE_URL, naming it', async () => {
    const { code, stderr } = await runQuickBench({}, ['--store', 'postgres']);
    expect(code).toBe(2);
    expect(stderr).toContain('--store postgres needs DATABASE_URL');
  });

  it('measures the growth mode on a small --rows: every figure at the baseline and at N rows, on each store', async () => {
    const { code, stdout, stderr, json } = await runQuickBench(databaseUrl ? { DATABASE_URL: databaseUrl } : {}, ['--rows', '2000']);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/\|\s*figure\s*\|\s*baseline\s*\|\s*N rows\s*\|\s*N\/baseline\s*\|/);
    const runs = json().runs;
    expect(runs.map((run) => run.name)).toEqual(databaseUrl ? ['sqlite', 'postgres'] : ['sqlite']);
    for (const run of runs) {
      const summaries = ['summary of a day of one busy account, alone: p50 ms', 'summary of a month of every account, alone: p50 ms'];
      const grown = run.rows.filter((row) => !summaries.includes(row.figure));
      expectMeasured(
        run.rows,
        [...GROWTH, ...summaries],
        grown.map((row) => row.figure),
      );
      expect(Number(run.rows[0]!.ours.replace(/,/g, ''))).toBeGreaterThanOrEqual(2_000);
      expectNoErrors(run.reports);
    }
  }, 300_000);
});

const GROWTH = [
  'notifications stored (collection_store_notifications)',
  'store bytes per notification (collection_store_bytes)',
  'start-up to listening, ms',
  'page deep in an account: queries/s',
  'page deep in an account: p99 ms',
  'resume 500 back: events/s',
  'resume: server rss peak MiB',
  'webhook 00: acks/s',
  'webhook 00: p99 ms',
];
