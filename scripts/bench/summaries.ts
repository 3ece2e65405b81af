// The growth mode's summaries (issue 17), on the store filled to N rows, before its webhook run: two
// questions a product screen asks, each of ours (collectionSummary over GraphQL) and of its floor, a
// plain indexed SUM over the same range in the same database (floors/summary-sum.ts), with the same
// request over the same HTTP:
// - a day of one busy account: the bank-local day in the middle of the filled history;
// - a month of every account: the bank-local calendar month holding that day, day by day.
// Each is asked once of both first, and their counts and sums must agree (a wrong answer is no
// figure). Then a lone request (1 connection, one request after another: the latency with nothing
// else running; the target is < 50 ms) and the load (--connections, --rounds taking turns, each
// side's median run), both as autocannon runs like every other HTTP scenario.
import { loadavg } from 'node:os';
import { DateTime } from 'luxon';
import { request } from 'undici';
import { BUSY_ACCOUNTS, fillSettlementId } from './fill-store.ts';
import { GRAPHQL_PATH, graphqlOutcome, query } from './graphql.ts';
import type { BenchOptions } from './options.ts';
import { ms, table } from './report.ts';
import { median, runOnServers, type ScenarioReport, type Side } from './suite.ts';
import { startTarget, type Target } from './targets.ts';

/** Ours runs with BANK_TIMEZONE unset: its default zone cuts the days. */
const BANK_ZONE = 'Africa/Lagos';
/** The target for one summary, alone. */
const TARGET_MS = 50;
export const SUMMARY_FLOOR_LABEL = 'plain SUM';

const SUMMARY_QUERY = `query Summary($accountNumber: String, $from: DateTime!, $to: DateTime!) {
  collectionSummary(accountNumber: $accountNumber, from: $from, to: $to) { count transactionAmount days { date count transactionAmount } }
}`;

/** One row of the summaries' table, as printed and as given in --json. */
export interface SummaryRow {
  figure: string;
  ours: string;
  floor: string;
  /** ours / floor. */
  ratio: string;
  target: string;
  met: string;
}

interface Question {
  name: string;
  accountNumber: string | undefined;
  from: DateTime;
  to: DateTime;
}

/** One figure's runs: ours and the floor's. */
interface Pair {
  ours: ScenarioReport;
  floor: ScenarioReport;
}

/** What one question measured, on both sides. */
interface Answered {
  question: Question;
  count: number;
  lone: Pair;
  loaded: Pair;
}

/** The day and the month asked: around the middle of the filled notifications 1 to `last`. */
async function questions(baseUrl: string, last: number): Promise<Question[]> {
  const time = async (index: number) => {
    const data = await query(baseUrl, `{ collectionNotification(settlementId: "${fillSettlementId(index)}") { transactionTime } }`);
    return Date.parse(data.collectionNotification.transactionTime);
  };
  const middle = DateTime.fromMillis(((await time(1)) + (await time(last))) / 2, { zone: BANK_ZONE });
  const day = middle.startOf('day');
  const month = middle.startOf('month');
  return [
    { name: `a day of one busy account (${BUSY_ACCOUNTS[0]}, ${day.toISODate()})`, accountNumber: BUSY_ACCOUNTS[0], from: day, to: day.plus({ days: 1 }) },
    { name: `a month of every account (${month.toFormat('yyyy-MM')}, day by day)`, accountNumber: undefined, from: month, to: month.plus({ months: 1 }) },
  ];
}

const bodyOf = (q: Question) =>
  JSON.stringify({ query: SUMMARY_QUERY, variables: { accountNumber: q.accountNumber ?? null, from: q.from.toISO(), to: q.to.toISO() } });

/** The count and sum `target` answers; throws with the outcome when the reply is not a summary. */
async function askOnce(target: Target, body: string): Promise<{ count: number; transactionAmount: string }> {
  const response = await request(`${target.baseUrl}${GRAPHQL_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await response.body.text();
  const outcome = graphqlOutcome(response.statusCode, text, (data) => typeof data.collectionSummary?.count === 'number');
  if (outcome !== 'ok') throw new Error(`${target.name} answered the summary ${outcome}: ${text.slice(0, 200)}`);
  const { count, transactionAmount } = JSON.parse(text).data.collectionSummary;
  return { count, transactionAmount };
}

/**
 * Measures both questions on ours (`target`, serving `storeUrl`) against the plain SUM on the same
 * store; `last` is the newest filled notification's index.
 */
export async function measureSummaries(
  target: Target,
  storeUrl: string,
  last: number,
  options: BenchOptions,
  say: (line: string) => void,
): Promise<{ rows: SummaryRow[]; reports: ScenarioReport[] }> {
  const floor = await startTarget('summary-sum', SUMMARY_FLOOR_LABEL, { FLOOR_STORE_URL: storeUrl });
  try {
    const answered: Answered[] = [];
    for (const question of await questions(target.baseUrl, last)) {
      const body = bodyOf(question);
      const [ours, plain] = [await askOnce(target, body), await askOnce(floor, body)];
      if (ours.count !== plain.count || ours.transactionAmount !== plain.transactionAmount) {
        throw new Error(`${question.name}: ours answered ${ours.count} notifications, ₦${ours.transactionAmount}; the plain SUM ${plain.count}, ₦${plain.transactionAmount}`);
      }
      const run = (side: Side, server: Target, connections: number) =>
        runOnServers({
          scenario: 'query-summary',
          options: { ...options, connections },
          subscribers: options.subscribers[0]!,
          side,
          name: server.name,
          servers: [server],
          job: { summary: { body, ...ours } },
        });
      // The load average says when other processes competed for the cores meanwhile.
      say(`${question.name}: ${ours.count.toLocaleString('en')} notifications; a lone request, then ${options.connections} connections × ${options.rounds} rounds, ours and the plain SUM in turn (load average ${loadavg()[0]!.toFixed(1)})…`);
      const lone: Pair = { ours: await run('ours', target, 1), floor: await run('floor', floor, 1) };
      const rounds = { ours: [] as ScenarioReport[], floor: [] as ScenarioReport[] };
      for (let round = 1; round <= options.rounds; round += 1) {
        rounds.ours.push(await run('ours', target, options.connections));
        rounds.floor.push(await run('floor', floor, options.connections));
      }
      const loaded: Pair = { ours: median(rounds.ours), floor: median(rounds.floor) };
      say(`  lone p50: ours ${ms(lone.ours.latencyMs.p50)} ms, plain SUM ${ms(lone.floor.latencyMs.p50)} ms; loaded: ours ${loaded.ours.perSecond.toFixed(0)}/s p99 ${ms(loaded.ours.latencyMs.p99)} ms, plain SUM ${loaded.floor.perSecond.toFixed(0)}/s p99 ${ms(loaded.floor.latencyMs.p99)} ms`);
      answered.push({ question, count: ours.count, lone, loaded });
    }
    return { rows: answered.flatMap(summaryRows), reports: answered.flatMap((a) => [a.lone.ours, a.lone.floor, a.loaded.ours, a.loaded.floor]) };
  } finally {
    await floor.stop();
  }
}

function summaryRows({ question, count, lone, loaded }: Answered): SummaryRow[] {
  const value = (r: ScenarioReport, pick: (r: ScenarioReport) => number) => (r.failure || r.errors > 0 ? Number.NaN : pick(r));
  const row = (figure: string, pick: (r: ScenarioReport) => number, runs: Pair, format: (v: number) => string, under?: number): SummaryRow => {
    const [ours, floor] = [value(runs.ours, pick), value(runs.floor, pick)];
    const ratio = ours / floor;
    const met = under === undefined ? '' : !Number.isFinite(ours) ? 'not measured' : ours < under ? 'yes' : `NO: ${ms(ours)} ms`;
    return { figure: `${question.name}: ${figure}`, ours: format(ours), floor: format(floor), ratio: Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : '-', target: under === undefined ? '' : `< ${under} ms`, met };
  };
  const p50 = (r: ScenarioReport) => r.latencyMs.p50;
  const p99 = (r: ScenarioReport) => r.latencyMs.p99;
  const show = (v: number) => (Number.isFinite(v) ? ms(v) : '-');
  return [
    { figure: `${question.name}: notifications summed`, ours: count.toLocaleString('en'), floor: count.toLocaleString('en'), ratio: '', target: '', met: '' },
    row('lone request, p50 ms', p50, lone, show, TARGET_MS),
    row('lone request, p99 ms', p99, lone, show),
    row('under load, queries/s', (r) => r.perSecond, loaded, (v) => (Number.isFinite(v) ? v.toFixed(0) : '-')),
    row('under load, p50 ms', p50, loaded, show),
    row('under load, p99 ms', p99, loaded, show),
  ];
}

/** The printed table of the summaries. */
export function summaryTable(rows: SummaryRow[]): string {
  return table(['figure', 'ours', SUMMARY_FLOOR_LABEL, 'ours/floor', 'target', 'met'], rows.map((r) => [r.figure, r.ours, r.floor, r.ratio, r.target, r.met]));
}

export const SUMMARIES_LEGEND = `\
summaries (at N rows, before the webhook run): collectionSummary(accountNumber:, from:, to:) { count
  transactionAmount days { date count transactionAmount } } for a bank-local day of one busy account
  and for the calendar month around it, every account; against a plain indexed SELECT count(*), sum(amount)
  over the same range in the same database (scripts/bench/floors/summary-sum.ts) on bare node:http,
  sent the same request. Both answers are checked equal first, and every reply under load after.
  lone request: 1 connection, one request after another; under load: --connections, --rounds each side.`;
