// `npm run bench -- --rows N`: how the figures move as the log grows. On each store (SQLite; then
// PostgreSQL with DATABASE_URL; --store postgres: PostgreSQL alone) ours gets a store of its own,
// filled through the webhook to a baseline (the resume's notifications and one more), measured,
// filled on to N notifications, and measured again: start-up, a page deep in a busy account, a resume
// from far back, the webhook; and at N, collectionSummary for a day of one account and a month of all.
// Cursors are asked of the API (collectionNotification(settlementId:) { cursor }), never built here.
import { BUSY_ACCOUNTS, fillAccount, fillSettlementId } from './bank.ts';
import { metric, query } from './graphql.ts';
import type { BenchOptions } from './options.ts';
import { atLeast, atMost, below, ms, row, whole, type Row } from './report.ts';
import type { Run } from './runs.ts';
import { appEnv, ownStore, type Services, type StoreKind } from './stores.ts';
import { describe, runOnServers, type ScenarioReport } from './suite.ts';
import { startTarget, type Target } from './targets.ts';

/** The resume goes back this far at most. */
const RESUME_DEPTH = 50_000;
/** The deep page: in this busy account, after its 41st-oldest notification, so 20 older ones follow. */
const PAGE_ACCOUNT = BUSY_ACCOUNTS[0];
const PAGE_DEPTH = 41;
/** A figure may move this much between the baseline and N rows. */
const WITHIN = 1.2;
const SUMMARY_MS = 50;
const DAY_MS = 86_400_000;
const WAT_MS = 3_600_000;
const SUMMARY = `query Summary($accountNumber: String, $from: DateTime!, $to: DateTime!) {
  collectionSummary(accountNumber: $accountNumber, from: $from, to: $to) { count transactionAmount days { date count transactionAmount } } }`;

interface Stage {
  rows: number;
  bytes: number;
  startupMs: number;
  page: ScenarioReport;
  resume: ScenarioReport;
  webhook: ScenarioReport;
  summaries: ScenarioReport[];
}

/** Runs the growth mode on each store it covers. */
export async function growthRuns(options: BenchOptions, parentDir: string, services: Services | undefined): Promise<Run[]> {
  const kinds: StoreKind[] = options.store === 'postgres' ? ['postgres'] : services ? ['sqlite', 'postgres'] : ['sqlite'];
  const runs: Run[] = [];
  for (const kind of kinds) runs.push(await growthRun(kind, options, parentDir, services?.databaseUrl));
  return runs;
}

async function growthRun(kind: StoreKind, options: BenchOptions, parentDir: string, databaseUrl: string | undefined): Promise<Run> {
  const n = options.rows!;
  const depth = Math.min(RESUME_DEPTH, Math.floor(n / 4));
  const say = (line: string) => process.stderr.write(`[growth ${kind}] ${line}\n`);
  const store = await ownStore(kind, parentDir, databaseUrl);
  const env = appEnv(store.storeUrl, 'memory:');
  // Bank times over the past year, in fill order.
  const span = { startMs: Date.now() - 365 * DAY_MS, stepMs: (365 * DAY_MS) / n };
  const server = { target: await startTarget('app', 'ours', env) };
  try {
    const fill = async (first: number, count: number) => {
      say(`filling notifications ${first.toLocaleString('en')} to ${(first + count - 1).toLocaleString('en')} through the webhook…`);
      const report = await runOnServers('fill', { ...options, warmupS: 0 }, [server.target], 'ours', { fill: { first, count, ...span } });
      if (report.failure || report.errors > 0) throw new Error(`the fill failed: ${describe(report)}`);
      return report;
    };
    const fills = [await fill(1, depth + 1)];
    const baseline = await measureStage(server, env, depth + 1, depth, options, say);
    // On to N in all: the baseline's webhook run stored some too. Never fewer than the resume reaches back.
    const more = Math.max(n - (await metric(server.target.baseUrl, 'collection_store_notifications')), depth + 1);
    fills.push(await fill(depth + 2, more));
    const middle = span.startMs + ((depth + 1 + more) / 2) * span.stepMs;
    const grown = await measureStage(server, env, depth + 1 + more, depth, options, say, (target, say) =>
      summaries(target, middle, options, say),
    );
    const reports = [...fills, ...[baseline, grown].flatMap((s) => [s.page, s.resume, ...s.summaries, s.webhook])];
    return {
      name: kind,
      title: `Growth on ${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: a store of ${(depth + 1).toLocaleString('en')} notifications against one of ${n.toLocaleString('en')}`,
      rows: growthRows(baseline, grown, depth),
      reports,
    };
  } finally {
    await server.target.stop();
    await store.drop();
  }
}

/** The cursor the API gives the filled notification `index`. */
async function cursorOf(baseUrl: string, index: number): Promise<string> {
  const data = await query(baseUrl, `{ collectionNotification(settlementId: "${fillSettlementId(index)}") { cursor } }`);
  if (typeof data.collectionNotification?.cursor !== 'string') throw new Error(`notification ${fillSettlementId(index)} is not stored`);
  return data.collectionNotification.cursor;
}

/** Every figure of one stage, on the store as it is; ours is started afresh for the start-up. */
async function measureStage(
  server: { target: Target },
  env: Record<string, string>,
  last: number,
  depth: number,
  options: BenchOptions,
  say: (line: string) => void,
  summarize?: (target: Target, say: (line: string) => void) => Promise<ScenarioReport[]>,
): Promise<Stage> {
  const starts: number[] = [];
  for (let i = 0; i < (options.quick ? 1 : 3); i += 1) {
    await server.target.stop();
    server.target = await startTarget('app', 'ours', env);
    starts.push(server.target.startMs);
  }
  const target = server.target;
  const startupMs = starts.sort((a, b) => a - b)[Math.floor((starts.length - 1) / 2)]!;
  const [rows, bytes] = [
    await metric(target.baseUrl, 'collection_store_notifications'),
    await metric(target.baseUrl, 'collection_store_bytes'),
  ];
  say(`${rows.toLocaleString('en')} notifications stored; start-up ${startupMs.toFixed(0)} ms`);
  const run = async (what: string, scenario: 'query' | 'resume' | 'webhook-00', extra = {}, connections = options.connections) => {
    const report = await runOnServers(scenario, { ...options, connections }, [target], 'ours', extra);
    say(`${what}: ${describe(report)}`);
    return { ...report, target: what };
  };
  let [nth, seen] = [0, 0];
  while (seen < PAGE_DEPTH) if (fillAccount((nth += 1)) === PAGE_ACCOUNT) seen += 1;
  const pageQuery =
    'query Page($after: String) { collectionNotifications(accountNumber: "0123456789", first: 20, after: $after) { edges { cursor node { settlementId transactionAmount } } } }';
  const body = JSON.stringify({ query: pageQuery, variables: { after: await cursorOf(target.baseUrl, nth) } });
  const page = await run('a page deep in an account', 'query', {
    query: { body, path: 'collectionNotifications.edges.length', equals: 20 },
  });
  const newest = await query(target.baseUrl, '{ collectionNotifications(first: 1) { edges { node { settlementId } } } }');
  const resume = {
    after: await cursorOf(target.baseUrl, last - depth),
    lastSettlementId: newest.collectionNotifications.edges[0].node.settlementId,
  };
  const replay = await run(`a resume ${depth.toLocaleString('en')} back`, 'resume', { resume });
  // Before the webhook, which adds notifications.
  const summaryReports = (await summarize?.(target, say)) ?? [];
  const webhook = await run('webhook 00', 'webhook-00');
  return { rows, bytes, startupMs, page, resume: replay, webhook, summaries: summaryReports };
}

/** Lone requests (one connection) of a day of a busy account and of a month of every account, around `middleMs`. */
async function summaries(target: Target, middleMs: number, options: BenchOptions, say: (line: string) => void): Promise<ScenarioReport[]> {
  const day = Math.floor((middleMs + WAT_MS) / DAY_MS) * DAY_MS - WAT_MS;
  const questions = [
    { what: 'summary of a day of one busy account', accountNumber: PAGE_ACCOUNT, from: day, to: day + DAY_MS },
    { what: 'summary of a month of every account', accountNumber: null, from: day - 15 * DAY_MS, to: day + 15 * DAY_MS },
  ];
  const reports: ScenarioReport[] = [];
  for (const { what, accountNumber, from, to } of questions) {
    const variables = { accountNumber, from: new Date(from).toISOString(), to: new Date(to).toISOString() };
    const { collectionSummary } = await query(target.baseUrl, SUMMARY, variables);
    const body = JSON.stringify({ query: SUMMARY, variables });
    const report = await runOnServers('query', { ...options, connections: 1 }, [target], 'ours', {
      query: { body, path: 'collectionSummary.count', equals: collectionSummary.count },
    });
    say(`${what} (${collectionSummary.count.toLocaleString('en')} notifications), alone: ${describe(report)}`);
    reports.push({ ...report, target: what });
  }
  return reports;
}

function growthRows(a: Stage, b: Stage, depth: number): Row[] {
  const rate = (r: ScenarioReport) => (r.failure ? Number.NaN : r.perSecond);
  const p99 = (r: ScenarioReport) => (r.failure ? Number.NaN : r.latencyMs.p99);
  const rss = (r: ScenarioReport) => r.servers[0]?.side.peak.rss ?? Number.NaN;
  const [higher, lower] = [atLeast(Number((1 / WITHIN).toFixed(2)), 'baseline'), atMost(WITHIN, 'baseline')];
  return [
    row('notifications stored (collection_store_notifications)', 'baseline', b.rows, a.rows, (v) => v.toLocaleString('en')),
    row('store bytes per notification (collection_store_bytes)', 'baseline', b.bytes / b.rows, a.bytes / a.rows, whole),
    row('start-up to listening, ms', 'baseline', b.startupMs, a.startupMs, whole, lower),
    row('page deep in an account: queries/s', 'baseline', rate(b.page), rate(a.page), whole, higher),
    row('page deep in an account: p99 ms', 'baseline', p99(b.page), p99(a.page), ms, lower),
    row(`resume ${depth.toLocaleString('en')} back: events/s`, 'baseline', rate(b.resume), rate(a.resume), whole, higher),
    row('resume: server rss peak MiB', 'baseline', rss(b.resume), rss(a.resume), whole, lower),
    row('webhook 00: acks/s', 'baseline', rate(b.webhook), rate(a.webhook), whole, higher),
    row('webhook 00: p99 ms', 'baseline', p99(b.webhook), p99(a.webhook), ms, lower),
    ...b.summaries.map((r) =>
      row(`${r.target}, alone: p50 ms`, 'baseline', r.failure ? Number.NaN : r.latencyMs.p50, Number.NaN, ms, below(SUMMARY_MS, 'ms')),
    ),
  ];
}
