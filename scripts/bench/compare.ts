// The figures of a run beside their floors, with the targets (docs/benchmarks.md, "Targets").
import { BANKS_SCENARIOS, LONG_LIST, type ScenarioName } from './protocol.ts';
import { atLeast, atMost, below, ms, row, whole, type Row, type Target } from './report.ts';
import type { ScenarioReport } from './suite.ts';

const HTTP_ROWS: [ScenarioName, string, string][] = [
  ['webhook-00', 'webhook 00 (new, durable)', 'acks/s'],
  ['webhook-01', 'webhook 01 (duplicate)', 'replies/s'],
  ['webhook-02', 'webhook 02 (refused, kept)', 'replies/s'],
  ['query-banks', 'banks', 'queries/s'],
  ['query-banks-600', `banks (${LONG_LIST} banks)`, 'queries/s'],
  ['query-account', 'account with its bank', 'queries/s'],
];
/** Throughput and p99 targets against each scenario's floor, the same on both stores. */
const TARGETS: Partial<Record<ScenarioName, [Target?, Target?]>> = {
  'webhook-00': [atLeast(0.85), atMost(1.5)],
  'webhook-01': [atLeast(0.85), atMost(1.5)],
  'query-banks': [atLeast(1.2)],
  'query-banks-600': [atLeast(1.2)],
};
/** The fan-out's targets hold from this many subscribers on one process. */
const FANOUT_TARGETS_FROM = 10_000;

type Pick = (report: ScenarioReport) => number;
const valueOf = (report: ScenarioReport | undefined, pick: Pick) => (report && !report.failure ? pick(report) : Number.NaN);
const rate: Pick = (r) => r.perSecond;
const p50: Pick = (r) => r.latencyMs.p50;
const p99: Pick = (r) => r.latencyMs.p99;
const rss: Pick = (r) => r.perSubscriberKB?.rss ?? Number.NaN;
const heap: Pick = (r) => r.perSubscriberKB?.heap ?? Number.NaN;
/** Milliseconds of the servers' CPU per reply: on a machine whose cores others share, steadier than the rate. */
const cpuPerReply: Pick = (r) => (r.servers.reduce((sum, server) => sum + server.side.cpuCores, 0) * 1000) / r.perSecond;

/** Queries with a token may cost this much of their rate without one (the token verified once, then remembered). */
const WITH_TOKEN = atLeast(0.9, 'ours without');

/** Hits over all lookups the response cache could answer, as a percentage; '-' when there were none. */
const hitRatio = (report: ScenarioReport | undefined) => {
  const counts = report?.responseCache;
  return counts && counts.hit + counts.miss > 0 ? `${((100 * counts.hit) / (counts.hit + counts.miss)).toFixed(2)}%` : '-';
};

/**
 * The rows of one run: ours (and two replicas, when `two` has them) against the floors' reports, and
 * the queries with a token (`token`) against ours without one.
 */
export function comparisonRows(
  ours: ScenarioReport[],
  floors: ScenarioReport[],
  two: ScenarioReport[] = [],
  token: ScenarioReport[] = [],
): Row[] {
  const find = (reports: ScenarioReport[], scenario: ScenarioName, subscribers?: number) =>
    reports.find((r) => r.scenario === scenario && (subscribers === undefined || r.subscribers === subscribers));
  const rows: Row[] = [];
  const add = (
    figure: string,
    scenario: ScenarioName,
    pick: Pick,
    format: (v: number) => string,
    target?: Target,
    subscribers?: number,
  ) => {
    const [mine, floor, both] = [find(ours, scenario, subscribers), find(floors, scenario, subscribers), find(two, scenario, subscribers)];
    if (!mine) return;
    const line = row(figure, floor?.target ?? '-', valueOf(mine, pick), valueOf(floor, pick), format, target);
    rows.push(both ? { ...line, two: Number.isFinite(valueOf(both, pick)) ? format(valueOf(both, pick)) : '-' } : line);
  };
  for (const [scenario, label, unit] of HTTP_ROWS) {
    const [throughput, latency] = TARGETS[scenario] ?? [];
    add(`${label}: ${unit}`, scenario, rate, whole, throughput);
    if (scenario === 'webhook-00') add(`${label}: p50 ms`, scenario, p50, ms);
    add(`${label}: p99 ms`, scenario, p99, ms, latency);
    if (!BANKS_SCENARIOS.includes(scenario) || !find(ours, scenario)) continue;
    add(`${label}: server CPU ms per query`, scenario, cpuPerReply, ms);
    // `banks` with a token is held against the floor itself: the response cache answers either caller.
    const [withToken, floor] = [find(token, scenario), find(floors, scenario)];
    if (withToken) {
      rows.push(
        row(`${label} with a token: ${unit}`, floor?.target ?? '-', valueOf(withToken, rate), valueOf(floor, rate), whole, throughput),
      );
      rows.push(
        row(
          `${label} with a token: server CPU ms per query`,
          floor?.target ?? '-',
          valueOf(withToken, cpuPerReply),
          valueOf(floor, cpuPerReply),
          ms,
        ),
      );
    }
    rows.push(hitRatioRow(label, find(ours, scenario)!, withToken, find(two, scenario)));
  }
  for (const withToken of token.filter((report) => !BANKS_SCENARIOS.includes(report.scenario as ScenarioName))) {
    const without = find(ours, withToken.scenario as ScenarioName);
    const label = HTTP_ROWS.find(([scenario]) => scenario === withToken.scenario)?.[1] ?? withToken.scenario;
    rows.push(
      row(`${label} with a token: queries/s`, 'ours without a token', valueOf(withToken, rate), valueOf(without, rate), whole, WITH_TOKEN),
    );
  }
  for (const mine of ours.filter((r) => r.scenario === 'fanout')) {
    const n = mine.subscribers!;
    const judged = n >= FANOUT_TARGETS_FROM;
    const label = `fan-out ${n.toLocaleString('en')} subs`;
    add(`${label}: p50 ms from 00`, 'fanout', p50, ms, undefined, n);
    add(`${label}: p99 ms from 00`, 'fanout', p99, ms, judged ? atMost(1.5) : undefined, n);
    add(`${label}: KB rss per subscriber`, 'fanout', rss, (v) => v.toFixed(1), judged ? below(50, 'KB') : undefined, n);
    add(`${label}: KB heap per subscriber`, 'fanout', heap, (v) => v.toFixed(1), undefined, n);
    rows.push(deliveries(`${label}: missed / doubled`, mine, find(floors, 'fanout', n), find(two, 'fanout', n)));
  }
  return rows;
}

/** The response cache's hit ratio over each run of `banks`: ours, with a token when measured, and two replicas. */
function hitRatioRow(label: string, mine: ScenarioReport, withToken: ScenarioReport | undefined, both: ScenarioReport | undefined): Row {
  const figure = `${label}: answered from memory${withToken ? ' (without / with a token)' : ''}`;
  const ours = withToken ? `${hitRatio(mine)} / ${hitRatio(withToken)}` : hitRatio(mine);
  const line: Row = { figure, floor: 'hits / (hits + misses)', ours, floorValue: '', ratio: '', target: '', met: '' };
  return both ? { ...line, two: hitRatio(both) } : line;
}

/** Missed and doubled deliveries (strangers count as doubled); the target is none at all. */
function deliveries(figure: string, mine: ScenarioReport, floor: ScenarioReport | undefined, both: ScenarioReport | undefined): Row {
  const count = (r: ScenarioReport | undefined) =>
    !r ? '-' : r.failure ? 'failed' : `${r.outcomes.missing ?? 0} / ${(r.outcomes.duplicate ?? 0) + (r.outcomes.unexpected ?? 0)}`;
  const clean = count(mine) === '0 / 0' && (!both || count(both) === '0 / 0');
  const line: Row = {
    figure,
    floor: floor?.target ?? 'broadcaster',
    ours: count(mine),
    floorValue: count(floor),
    ratio: '',
    target: '0 / 0',
    met: clean ? 'yes' : 'NO',
  };
  return both ? { ...line, two: count(both) } : line;
}
