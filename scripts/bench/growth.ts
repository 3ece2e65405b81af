// `npm run bench -- --rows N`: how the figures move as the log grows. On each store (SQLite; then
// PostgreSQL when DATABASE_URL is set; --store postgres: PostgreSQL alone) the store is filled
// (scripts/bench/fill-store.ts) to a baseline just big enough for the figures, measured, filled on to N
// notifications, and measured again, in the same run:
// - start-up: `node src/main.ts` on the store, to its first 200 from /health/ready (median of the tries);
// - a page deep in a busy account's history: collectionNotifications(accountNumber:, first: 20,
//   after: <the cursor of its 21st-oldest notification>), as load, like the other queries;
// - a resume: incomingTransfer(after:) over graphql-ws from min(50,000, N/4) notifications back,
//   events/s, and the server's memory peak meanwhile;
// - at N rows only, collectionSummary for a day of one account and a month of all, against a plain
//   indexed SUM in the same database (scripts/bench/summaries.ts);
// - webhook 00, as load (after the others: it adds notifications).
// Cursors are asked of the API (collectionNotification(settlementId:) { cursor }), never built here.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { measureStartup } from './cold-start.ts';
import { BUSY_ACCOUNTS, fillAccount, fillSettlementId, fillStore } from './fill-store.ts';
import { query } from './graphql.ts';
import type { BenchOptions, StoreChoice } from './options.ts';
import { isolatedSchema } from './replicas.ts';
import { ms, table } from './report.ts';
import { appEnv, type PostgresServices } from './runs.ts';
import { runOnServers, type ScenarioReport } from './suite.ts';
import { measureSummaries, SUMMARIES_LEGEND, summaryTable, type SummaryRow } from './summaries.ts';
import { killTargets, startTarget, type Target } from './targets.ts';

/** The resume goes back this far at most (the figure). */
const RESUME_DEPTH = 50_000;
/** The busy account the deep page reads, and how deep: its 21st-oldest notification, so 20 older ones follow. */
const PAGE_ACCOUNT = BUSY_ACCOUNTS[0];
const PAGE_DEPTH = 21;
/** A figure may move this much between the baseline and N rows (the target). */
const WITHIN = 1.2;

/** One stage's figures: the store at one size. */
interface Stage {
  rows: number;
  bytes: number;
  startupMs: number;
  page: ScenarioReport;
  resume: ScenarioReport;
  /** The server's peaks during the resume, MiB. */
  resumePeak: { rss: number; heap: number };
  webhook: ScenarioReport;
  /** At N rows only: the summaries against the plain SUM. */
  summaries?: { rows: SummaryRow[]; reports: ScenarioReport[] } | undefined;
}

/** One row of a growth table, as printed and as given in --json. */
export interface GrowthRow {
  figure: string;
  baseline: string;
  grown: string;
  /** grown / baseline. */
  ratio: string;
  target: string;
  met: string;
}

export interface GrowthRun {
  name: string;
  reports: ScenarioReport[];
  growth: GrowthRow[];
  /** The summaries at N rows, ours against the plain SUM. */
  summaries: SummaryRow[];
}

/** Runs the growth mode on each store it covers, printing a table per store. */
export async function growthRuns(options: BenchOptions, parentDir: string, services: PostgresServices | undefined): Promise<GrowthRun[]> {
  const kinds: StoreChoice[] = options.store === 'postgres' ? ['postgres'] : services ? ['sqlite', 'postgres'] : ['sqlite'];
  const runs: GrowthRun[] = [];
  for (const kind of kinds) runs.push(await growthRun(kind, options, parentDir, services?.databaseUrl));
  return runs;
}

/** A store of `kind` of its own: a SQLite file in a temp dir, or a PostgreSQL schema; removed by `drop`. */
async function ownStore(kind: StoreChoice, parentDir: string, databaseUrl: string | undefined) {
  if (kind === 'postgres') {
    const schema = await isolatedSchema(databaseUrl!);
    return { storeUrl: schema.url, drop: schema.drop };
  }
  const dir = mkdtempSync(join(parentDir, 'bank-subgraph-growth-'));
  return { storeUrl: `sqlite:${join(dir, 'collections.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function growthRun(kind: StoreChoice, options: BenchOptions, parentDir: string, databaseUrl: string | undefined): Promise<GrowthRun> {
  const rows = options.rows!;
  const depth = Math.min(RESUME_DEPTH, Math.floor(rows / 4));
  const store = await ownStore(kind, parentDir, databaseUrl);
  const started = performance.now();
  try {
    const say = (line: string) => process.stderr.write(`[growth ${kind}] ${line}\n`);
    say(`filling a baseline of ${(depth + 1).toLocaleString('en')} notifications…`);
    const first = await fillStore(store.storeUrl, { rows: depth + 1, from: 1 });
    const baseline = await measureStage(store.storeUrl, { resumeAfter: first.from, last: first.to }, options, parentDir, say);
    say(`filling on to ${rows.toLocaleString('en')} notifications…`);
    const fillStarted = performance.now();
    // Up to N in all (the baseline's webhook stored some), and always past the resume's depth.
    const second = await fillStore(store.storeUrl, { rows: depth + 1, upTo: rows });
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const grown = await measureStage(store.storeUrl, { resumeAfter: second.to - depth, last: second.to }, options, parentDir, say, (target) =>
      measureSummaries(target, store.storeUrl, second.to, options, say),
    );
    const growth = growthRows(baseline, grown, depth);
    const minutes = ((performance.now() - started) / 60_000).toFixed(1);
    const storeName = kind === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    console.log(`\nGROWTH on ${storeName}: the baseline against ${rows.toLocaleString('en')} notifications (filled at ${Math.round((second.to - second.from + 1) / second.seconds).toLocaleString('en')} rows/s, ${fillSeconds.toFixed(0)} s with the settling; ${minutes} min for this store)\n\n${growthTable(growth)}`);
    const summaries = grown.summaries?.rows ?? [];
    console.log(`\nSUMMARIES on ${storeName} at ${grown.rows.toLocaleString('en')} notifications: ours against a plain indexed SUM in the same database\n\n${summaryTable(summaries)}`);
    const reports = [baseline, grown].flatMap((s) => [s.page, s.resume, ...(s.summaries?.reports ?? []), s.webhook]);
    return { name: `growth-${kind}`, reports, growth, summaries };
  } finally {
    await store.drop();
  }
}

/** The fill index of the account's `nth` oldest filled notification. */
function nthOfAccount(account: string, nth: number): number {
  let seen = 0;
  for (let index = 1; ; index += 1) if (fillAccount(index) === account && (seen += 1) === nth) return index;
}

/** The cursor the API gives the filled notification `index`. */
async function cursorOf(baseUrl: string, index: number): Promise<string> {
  const data = await query(baseUrl, `{ collectionNotification(settlementId: "${fillSettlementId(index)}") { cursor } }`);
  const cursor = data.collectionNotification?.cursor;
  if (typeof cursor !== 'string') throw new Error(`notification ${fillSettlementId(index)} is not stored`);
  return cursor;
}

/** Every figure of one stage, on the store as it is. */
async function measureStage(
  storeUrl: string,
  resume: { resumeAfter: number; last: number },
  options: BenchOptions,
  parentDir: string,
  say: (line: string) => void,
  summarize?: (target: Target) => Promise<Stage['summaries']>,
): Promise<Stage> {
  say(`start-up: node src/main.ts on the store, ${options.coldStarts} ×…`);
  const startupMs = await measureStartup(storeUrl, options.coldStarts, parentDir);
  const target = await startTarget('app', 'ours', appEnv(storeUrl, 'memory:'));
  try {
    const size = await storeSize(target);
    say(`${size.rows.toLocaleString('en')} notifications stored (${(size.bytes / 1024 / 1024).toFixed(0)} MiB); start-up ${startupMs.toFixed(0)} ms`);
    const run = (scenario: 'query-deep-page' | 'resume' | 'webhook-00', job = {}) =>
      runOnServers({ scenario, options, subscribers: options.subscribers[0]!, side: 'ours', name: 'ours', servers: [target], job });
    const pageCursor = await cursorOf(target.baseUrl, nthOfAccount(PAGE_ACCOUNT, PAGE_DEPTH));
    const pageQuery = `{ collectionNotifications(accountNumber: "${PAGE_ACCOUNT}", first: 20, after: "${pageCursor}") { edges { cursor node { settlementId transactionAmount } } } }`;
    const page = await run('query-deep-page', { query: pageQuery });
    say(`page deep in ${PAGE_ACCOUNT}: ${describe(page, 'queries/s')}`);
    const after = await cursorOf(target.baseUrl, resume.resumeAfter);
    await target.call('memory');
    const replay = await run('resume', { resume: { after, lastSettlementId: fillSettlementId(resume.last) } });
    const peak = replay.servers[0]?.side.peak ?? { rss: Number.NaN, heapUsed: Number.NaN };
    say(`resume of ${(resume.last - resume.resumeAfter).toLocaleString('en')}: ${describe(replay, 'events/s')}, server peaks rss ${peak.rss.toFixed(0)} MiB, heap ${peak.heapUsed.toFixed(0)} MiB`);
    // Before the webhook, which adds notifications.
    const summaries = await summarize?.(target);
    const webhook = await run('webhook-00');
    say(`webhook 00: ${describe(webhook, 'acks/s')}`);
    return { ...size, startupMs, page, resume: replay, resumePeak: { rss: peak.rss, heap: peak.heapUsed }, webhook, summaries };
  } finally {
    await target.stop();
    killTargets();
  }
}

function describe(report: ScenarioReport, unit: string): string {
  if (report.failure) return `failed: ${report.failure}`;
  return `${report.perSecond.toFixed(0)} ${unit}, p50 ${ms(report.latencyMs.p50)} ms, p99 ${ms(report.latencyMs.p99)} ms, ${report.errors} errors`;
}

/** The store's size as ours reports it on /metrics (collection_store_notifications, collection_store_bytes). */
async function storeSize(target: Target): Promise<{ rows: number; bytes: number }> {
  const text = await (await request(`${target.baseUrl}/metrics`)).body.text();
  const value = (name: string) => Number(/^(\S+) (\S+)$/m.exec(text.split('\n').find((line) => line.startsWith(`${name} `)) ?? '')?.[2] ?? Number.NaN);
  return { rows: value('collection_store_notifications'), bytes: value('collection_store_bytes') };
}

type Direction = 'higher' | 'lower';

/** The table's rows: each figure at the baseline and at N rows, with the target "within 1.2×". */
function growthRows(a: Stage, b: Stage, depth: number): GrowthRow[] {
  const rate = (r: ScenarioReport) => (r.failure ? Number.NaN : r.perSecond);
  const p99 = (r: ScenarioReport) => (r.failure ? Number.NaN : r.latencyMs.p99);
  const whole = (v: number) => v.toFixed(0);
  const row = (figure: string, x: number, y: number, format: (v: number) => string, better?: Direction): GrowthRow => {
    const ratio = y / x;
    const holds = better === 'higher' ? ratio >= 1 / WITHIN : ratio <= WITHIN;
    const target = better ? (better === 'higher' ? `≥ ${(1 / WITHIN).toFixed(2)}× baseline` : `≤ ${WITHIN}× baseline`) : '';
    const met = !better ? '' : !Number.isFinite(ratio) ? 'not measured' : holds ? 'yes' : `NO: ${ratio.toFixed(2)}×`;
    return { figure, baseline: format(x), grown: format(y), ratio: Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : '-', target, met };
  };
  return [
    row('notifications stored (collection_store_notifications)', a.rows, b.rows, (v) => v.toLocaleString('en')),
    row('store bytes per notification (collection_store_bytes)', a.bytes / a.rows, b.bytes / b.rows, whole),
    row('start-up to /health/ready, ms', a.startupMs, b.startupMs, whole, 'lower'),
    row('page deep in an account: queries/s', rate(a.page), rate(b.page), whole, 'higher'),
    row('page deep in an account: p99 ms', p99(a.page), p99(b.page), ms, 'lower'),
    row(`resume ${depth.toLocaleString('en')} back: events/s`, rate(a.resume), rate(b.resume), whole, 'higher'),
    row('resume: server rss peak MiB', a.resumePeak.rss, b.resumePeak.rss, whole, 'lower'),
    row('resume: server heap peak MiB', a.resumePeak.heap, b.resumePeak.heap, whole),
    row('webhook 00: acks/s', rate(a.webhook), rate(b.webhook), whole, 'higher'),
    row('webhook 00: p99 ms', p99(a.webhook), p99(b.webhook), ms, 'lower'),
  ];
}

function growthTable(rows: GrowthRow[]): string {
  return table(['figure', 'baseline', 'N rows', 'N/baseline', 'target', 'met'], rows.map((r) => [r.figure, r.baseline, r.grown, r.ratio, r.target, r.met]));
}

export const GROWTH_LEGEND = `\
baseline: the store filled with just what the figures need (the resume's notifications and one more);
  N rows: filled on to --rows notifications in all (filled rows: scripts/bench/fill-store.ts).
start-up: node src/main.ts on the store to its first 200 from /health/ready, the median of the tries.
page deep: collectionNotifications(accountNumber: <a busy account>, first: 20, after: <the cursor of
  its 21st-oldest notification>) as HTTP load; at N rows the same cursor lies deeper in its history.
resume: one graphql-ws client on incomingTransfer(after: <cursor>) reading the replay as it comes;
  events/s over the whole replay; the server's rss and heap peaks (sampled every 100 ms) meanwhile.
webhook 00: as in the main runs, after the others (it adds notifications).
${SUMMARIES_LEGEND}`;
