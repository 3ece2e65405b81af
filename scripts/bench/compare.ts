// The comparison table: each of our figures beside its floor's, their ratio, and the target.
import type { ColdStart } from './cold-start.ts';
import type { StoreChoice } from './options.ts';
import type { ScenarioName } from './protocol.ts';
import { ms, table } from './report.ts';
import { OUR_ROW_SUFFIX, type ScenarioReport } from './suite.ts';

/** How a row's target reads and whether it holds: on the ratio (ours / floor) or on our figure alone. */
interface Target {
  text: string;
  on: 'ratio' | 'ours';
  holds(value: number): boolean;
}

/** One row of the table, as printed and as given in --json. */
export interface ComparisonRow {
  figure: string;
  floor: string;
  ours: string;
  floorValue: string;
  ratio: string;
  target: string;
  /** '' without a target; 'yes', or 'NO: …' saying by how much. */
  met: string;
}

const atLeast = (min: number): Target => ({ text: `≥ ${min}× floor`, on: 'ratio', holds: (v) => v >= min });
const atMost = (max: number): Target => ({ text: `≤ ${max}× floor`, on: 'ratio', holds: (v) => v <= max });
const below = (max: number, unit: string): Target => ({ text: `< ${max} ${unit}`, on: 'ours', holds: (v) => v < max });

const FLOOR_NAMES = { 'webhook-00': 'bare receiver', 'webhook-01': 'bare receiver', fanout: 'broadcaster' } as Record<ScenarioName, string>;
/** The floor a row names: the one measured (its process's name), else the usual one. */
const floorName = (scenario: ScenarioName, floor: ScenarioReport | undefined) => floor?.target ?? FLOOR_NAMES[scenario] ?? 'bare Apollo';
const HTTP_ROWS: [ScenarioName, string, string][] = [
  ['webhook-00', 'webhook 00 (new, durable)', 'acks/s'],
  ['webhook-01', 'webhook 01 (duplicate)', 'replies/s'],
  ['query-banks', 'banks', 'queries/s'],
  ['query-account', 'account with its bank', 'queries/s'],
  ['query-notifications', 'collectionNotifications(first: 20)', 'queries/s'],
];

/** The targets per store, on throughput and p99: the webhook's floor differs (SQLite or PostgreSQL receiver). */
const HTTP_TARGETS: Record<StoreChoice, Partial<Record<ScenarioName, [Target?, Target?]>>> = {
  sqlite: { 'webhook-00': [atLeast(0.8), atMost(2)], 'query-banks': [atLeast(0.9)] },
  postgres: { 'webhook-00': [atLeast(0.9), atMost(1.5)], 'webhook-01': [atLeast(0.8)], 'query-banks': [atLeast(0.9)] },
};

/**
 * Builds the rows from one run's reports (floor figures may come from another run) and the cold
 * start, with the targets of `targets`' store, or none (two replicas against one).
 */
export function comparisonRows(
  ours: ScenarioReport[],
  floors: ScenarioReport[],
  coldStart: ColdStart | undefined,
  targets: StoreChoice | 'none' = 'sqlite',
): ComparisonRow[] {
  const rows: ComparisonRow[] = [];
  const judged = targets !== 'none';
  const find = (reports: ScenarioReport[], scenario: ScenarioName, subscribers?: number) =>
    reports.find((r) => r.scenario === scenario && r.subscribers === subscribers);
  for (const [scenario, label, unit] of HTTP_ROWS) {
    const mine = find(ours, scenario);
    if (!mine) continue;
    const floor = find(floors, scenario);
    const name = floorName(scenario, floor);
    // The targets are on the usual floors, not on a receiver storing our row (--floor-row ours).
    const usualFloor = !floor?.target.endsWith(OUR_ROW_SUFFIX);
    const [throughputTarget, p99Target] = judged && usualFloor ? (HTTP_TARGETS[targets][scenario] ?? []) : [];
    rows.push(row(`${label}: ${unit}`, name, mine, floor, (r) => r.perSecond, (v) => v.toFixed(0), throughputTarget));
    if (scenario === 'webhook-00') rows.push(row(`${label}: p50 ms`, name, mine, floor, (r) => r.latencyMs.p50, ms));
    rows.push(row(`${label}: p99 ms`, name, mine, floor, (r) => r.latencyMs.p99, ms, p99Target));
  }
  for (const mine of ours.filter((r) => r.scenario === 'fanout')) {
    const n = mine.subscribers!;
    const floor = find(floors, 'fanout', n);
    const big = judged && n >= 10_000;
    const label = `fan-out ${n.toLocaleString('en')} subs`;
    rows.push(row(`${label}: p50 ms from 00`, 'broadcaster', mine, floor, (r) => r.latencyMs.p50, ms));
    rows.push(row(`${label}: p99 ms from 00`, 'broadcaster', mine, floor, (r) => r.latencyMs.p99, ms, big ? atMost(1.5) : undefined));
    const kb = (r: ScenarioReport) => (r.failure || !r.perSubscriberKB ? Number.NaN : r.perSubscriberKB.rss);
    rows.push(row(`${label}: KB rss per subscriber`, 'broadcaster', mine, floor, kb, (v) => v.toFixed(1), big ? below(50, 'KB') : undefined));
    const heap = (r: ScenarioReport) => (r.failure || !r.perSubscriberKB ? Number.NaN : r.perSubscriberKB.heap);
    rows.push(row(`${label}: KB heap per subscriber`, 'broadcaster', mine, floor, heap, (v) => v.toFixed(1)));
    rows.push(deliveryRow(`${label}: missed / doubled`, mine, floor));
  }
  if (coldStart && judged) {
    const ratio = coldStart.oursMs / coldStart.floorMs;
    const holds = coldStart.oursMs < 1500;
    rows.push({
      figure: `cold start to /health/ready, ms (median of ${coldStart.tries})`,
      floor: 'bare Apollo',
      ours: coldStart.oursMs.toFixed(0),
      floorValue: coldStart.floorMs.toFixed(0),
      ratio: `${ratio.toFixed(2)}×`,
      target: '< 1500 ms',
      met: holds ? 'yes' : `NO: ${(coldStart.oursMs / 1500).toFixed(2)}× the target`,
    });
  }
  return rows;
}

function row(
  figure: string,
  floorLabel: string,
  mine: ScenarioReport,
  floor: ScenarioReport | undefined,
  value: (r: ScenarioReport) => number,
  format: (v: number) => string,
  target?: Target,
): ComparisonRow {
  const ours = mine.failure ? Number.NaN : value(mine);
  const theirs = floor && !floor.failure ? value(floor) : Number.NaN;
  // A ratio of a negative growth (memory given back) says nothing.
  const ratio = ours >= 0 && theirs > 0 ? ours / theirs : Number.NaN;
  const show = (v: number, report: ScenarioReport | undefined) =>
    report === undefined ? '-' : report.failure ? 'failed' : Number.isFinite(v) ? format(v) : '-';
  const judged = target?.on === 'ratio' ? ratio : ours;
  let met = '';
  if (target) {
    if (!Number.isFinite(judged)) met = 'not measured';
    else if (target.holds(judged)) met = 'yes';
    else met = target.on === 'ratio' ? `NO: ${ratio.toFixed(2)}×` : `NO: ${format(ours)}`;
  }
  return {
    figure,
    floor: floorLabel,
    ours: show(ours, mine),
    floorValue: show(theirs, floor),
    ratio: Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : '-',
    target: target?.text ?? '',
    met,
  };
}

/** Missed and doubled deliveries (and strangers) per side; the target is none at all. */
function deliveryRow(figure: string, mine: ScenarioReport, floor: ScenarioReport | undefined): ComparisonRow {
  const count = (r: ScenarioReport) => `${r.outcomes.missing ?? 0} / ${(r.outcomes.duplicate ?? 0) + (r.outcomes.unexpected ?? 0)}`;
  const clean = !mine.failure && count(mine) === '0 / 0';
  return {
    figure,
    floor: 'broadcaster',
    ours: mine.failure ? 'failed' : count(mine),
    floorValue: floor ? (floor.failure ? 'failed' : count(floor)) : '-',
    ratio: '',
    target: '0 / 0',
    met: clean ? 'yes' : 'NO',
  };
}

/** The table as printed. */
export function comparisonTable(rows: ComparisonRow[], floorNote = ''): string {
  return table(
    ['figure', 'floor', 'ours', `floor${floorNote}`, 'ours/floor', 'target', 'met'],
    rows.map((r) => [r.figure, r.floor, r.ours, r.floorValue, r.ratio, r.target, r.met]),
  );
}

/** One row of the two-against-one table, as printed and as given in --json. */
export interface ReplicaRow {
  figure: string;
  one: string;
  two: string;
  /** two / one. */
  ratio: string;
  /** The floor's figure, where the run measured one (the webhook's PostgreSQL receiver). */
  floorValue: string;
  floor: string;
}

/** Two replicas against one, figure by figure, with the floor of this run beside them. */
export function replicaRows(one: ScenarioReport[], two: ScenarioReport[], floors: ScenarioReport[]): ReplicaRow[] {
  const againstOne = comparisonRows(two, one, undefined, 'none');
  const againstFloor = new Map(comparisonRows(one, floors, undefined, 'none').map((row) => [row.figure, row]));
  return againstOne.map((row) => {
    const floor = againstFloor.get(row.figure);
    const measured = floor !== undefined && floor.floorValue !== '-';
    return { figure: row.figure, one: row.floorValue, two: row.ours, ratio: row.ratio, floorValue: measured ? floor.floorValue : '', floor: measured ? floor.floor : '' };
  });
}

/** The two-against-one table as printed. */
export function replicaTable(rows: ReplicaRow[]): string {
  return table(
    ['figure', 'one replica', 'two replicas', 'two/one', 'floor', 'floor is'],
    rows.map((r) => [r.figure, r.one, r.two, r.ratio, r.floorValue, r.floor]),
  );
}

export const FLOORS_LEGEND = `\
Floors, each its own process on a loopback port, driven as ours is (a fresh load process per run):
  bare receiver: node:http + node:sqlite (WAL, synchronous=FULL): signature and Client-Id check, JSON
    parse, INSERT … ON CONFLICT (settlement_id) DO NOTHING, one commit per event-loop turn for every
    delivery that arrived in it (group commit), then the bank's JSON reply (00, or 01 for a duplicate).
  bare receiver (PostgreSQL): the same rules and reply on node:http + pg; every delivery of one turn
    in ONE statement, INSERT … SELECT FROM unnest(…) ON CONFLICT (settlement_id) DO NOTHING RETURNING,
    an implicit transaction with synchronous_commit on; up to 4 batches in flight on their own
    connections. Its table holds settlement_id, session_id and the body, as the SQLite receiver's.
  … with our row (--floor-row ours): the same receiver storing the row our store writes (our schema
    and indexes, each body parsed and normalised as ours does): the ratio is what our code costs
    beyond that row. No target is judged against it.
  bare Apollo: Fastify + Apollo Server + buildSubgraphSchema, Apollo's defaults, nothing of ours,
    answering the same three queries from memory (the sandbox's 32 banks, a static account with its
    bank, a static page of 20): the ratio is what our plugins, the sandbox call or the store read cost.
  broadcaster: a ws server speaking just enough graphql-transport-ws; on a webhook-shaped POST it
    answers 00, then writes one pre-serialised next frame (the id spliced in) to every subscription.
ours/floor: above 1 is more for ours (faster for per s, slower for ms, bigger for KB).
KB per subscriber: the server's growth in RSS and in heap, each after a forced GC, from before the
  subscribers connected to when all were live, divided by their number (summed over replicas). At
  1,000 subscribers RSS moves less than the allocator's own noise; the heap figure is the steadier.
The fan-out's load process receives every frame itself: its own work per frame bounds the floor.`;
