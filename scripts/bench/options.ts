import { parseArgs } from 'node:util';
import { SELECTABLE, type Selectable } from './protocol.ts';

/** Rows per writer and round in the insert-cost mode: a few seconds each on a 2-core machine. */
const INSERT_COST_ROWS = 50_000;

export const USAGE = `usage: npm run bench -- [--store sqlite|postgres] [--duration 5] [--warmup 1] [--connections 100] [--rounds 3]
       [--subscribers 1000,10000] [--events 30] [--only <name>[,<name>…]] [--quick] [--tracing] [--json] [--dir <parent of the temp dirs>]
       [--floor-row floor|ours]
       npm run bench -- --rows 1000000 [--store sqlite|postgres] [--duration …] [--connections …] [--quick] [--json]
       npm run bench -- --insert-cost [--store sqlite|postgres] [--rounds 3] [--quick]
Names for --only: ${SELECTABLE.join(', ')}.
--store sqlite (the default): the first run on a SQLite file, then, with DATABASE_URL set, the PostgreSQL
  run. --store postgres: the PostgreSQL run alone (DATABASE_URL required). The PostgreSQL run compares
  ours with the PostgreSQL receiver floor; with REDIS_URL set it uses Redis pub/sub and adds two
  replicas against one.
--floor-row ours: the webhook's receivers store our row instead of their three columns (our schema
  and indexes, each body parsed and normalised as ours does), the rest of them unchanged: ours against
  them is what our code costs beyond the row; their rate against the usual receivers' (another run)
  is what the row costs. The webhook rows then carry no target: the targets are on the usual floors.
--rows N: the growth mode instead: webhook 00, start-up, a page deep in an account and a resume of
  up to 50,000 notifications, on a store filled to a baseline and then to N notifications (SQLite;
  then PostgreSQL with DATABASE_URL; --store postgres: PostgreSQL alone), with the ratio of the two;
  and at N rows, collectionSummary for a day of one account and a month of all, against a plain SUM.
--insert-cost: what storing one notification costs in CPU, ours against the floor's row, with no HTTP:
  our store, our store without its time-range and summary indexes, and the floor's table, each written
  ${INSERT_COST_ROWS} rows a round in transactions of the webhook's size (SQLite; then PostgreSQL with
  DATABASE_URL, the database server's CPU too when it runs on this machine).
--rounds: each HTTP scenario with a floor runs this many times, ours and the floor taking turns;
  each side's median run is reported, so a slow moment of the shared machine lands on both sides.
--quick: a run of seconds that checks every scenario and floor works (0.5 s, 10 connections, one
  round, 50 subscribers, 5 events, one cold start); figures from it mean nothing. Options given win over it.
Fan-out runs post --events notifications, fewer when subscribers × events would pass 200,000.`;

export type StoreChoice = 'sqlite' | 'postgres';
/** What the webhook's receivers store: their own three columns, or the row our store writes. */
export type FloorRow = 'floor' | 'ours';

export interface BenchOptions {
  /** sqlite: the SQLite run first, the PostgreSQL run after it when DATABASE_URL is set; postgres: that run alone. */
  store: StoreChoice;
  /** The row the webhook's floors store (`--floor-row`). */
  floorRow: FloorRow;
  /** The growth mode: the figures at a baseline and at this many stored notifications. */
  rows: number | undefined;
  /** Seconds of measured load per HTTP scenario. */
  durationS: number;
  /** Seconds of unmeasured load before each HTTP scenario (and 5 unmeasured fan-out events when > 0). */
  warmupS: number;
  connections: number;
  /** Runs per side of each HTTP scenario with a floor, interleaved; each side's median is reported. */
  rounds: number;
  /** One fan-out run per count. */
  subscribers: number[];
  /** Events per fan-out run; fewer for many subscribers (at most 200,000 deliveries a run). */
  events: number;
  /** How many times each cold start is measured (the median is shown). */
  coldStarts: number;
  selected: readonly Selectable[];
  quick: boolean;
  /** The insert-cost mode: the store's CPU per row against the floor's, no HTTP. */
  insertCost: boolean;
  /** Rows each writer stores per round in the insert-cost mode. */
  insertCostRows: number;
  /** After the first run, query-banks and webhook-00 again with tracing on (every span sampled). */
  tracing: boolean;
  json: boolean;
  /** Where the temp dirs for the SQLite files are made; the OS's temp dir by default. */
  dir: string | undefined;
  help: boolean;
}

/** A mistake in the command line; the message says which option. */
export class UsageError extends Error {}

const DEFAULTS = { duration: '5', warmup: '1', connections: '100', rounds: '3', subscribers: '1000,10000', events: '30' };
const QUICK = { duration: '0.5', warmup: '0', connections: '10', rounds: '1', subscribers: '50', events: '5' };

/** Reads the command line; throws a UsageError naming the first bad option. */
export function readOptions(args: string[]): BenchOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        store: { type: 'string' },
        'floor-row': { type: 'string' },
        rows: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        connections: { type: 'string' },
        rounds: { type: 'string' },
        subscribers: { type: 'string' },
        events: { type: 'string' },
        only: { type: 'string' },
        quick: { type: 'boolean', default: false },
        tracing: { type: 'boolean', default: false },
        'insert-cost': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        dir: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const defaults = values.quick ? QUICK : DEFAULTS;
  const store = values.store ?? 'sqlite';
  if (store !== 'sqlite' && store !== 'postgres') throw new UsageError(`--store must be sqlite or postgres, got "${store}"`);
  if (values.rows !== undefined && (values.only !== undefined || values.tracing)) {
    throw new UsageError('--rows runs the growth mode alone: leave out --only and --tracing');
  }
  if (values['insert-cost'] && (values.rows !== undefined || values.only !== undefined || values.tracing)) {
    throw new UsageError('--insert-cost runs alone: leave out --rows, --only and --tracing');
  }
  const floorRow = values['floor-row'] ?? 'floor';
  if (floorRow !== 'floor' && floorRow !== 'ours') throw new UsageError(`--floor-row must be floor or ours, got "${floorRow}"`);
  if (floorRow === 'ours' && (values.rows !== undefined || values['insert-cost'])) {
    throw new UsageError('--floor-row changes the webhook\'s floors: leave out --rows and --insert-cost, which have none');
  }
  if (values.tracing && store === 'postgres') throw new UsageError('--tracing measures the SQLite run: leave out --store postgres');
  return {
    store,
    floorRow,
    rows: values.rows === undefined ? undefined : rowCount(values.rows),
    durationS: seconds('--duration', values.duration ?? defaults.duration, 0.1),
    warmupS: seconds('--warmup', values.warmup ?? defaults.warmup, 0),
    connections: count('--connections', values.connections ?? defaults.connections),
    rounds: count('--rounds', values.rounds ?? defaults.rounds),
    subscribers: (values.subscribers ?? defaults.subscribers).split(',').map((raw) => count('--subscribers', raw.trim())),
    events: count('--events', values.events ?? defaults.events),
    coldStarts: values.quick ? 1 : 3,
    selected: selection(values.only),
    quick: values.quick,
    insertCost: values['insert-cost'],
    insertCostRows: values.quick ? 500 : INSERT_COST_ROWS,
    tracing: values.tracing,
    json: values.json,
    dir: values.dir,
    help: values.help,
  };
}

function selection(only: string | undefined): readonly Selectable[] {
  if (only === undefined) return SELECTABLE;
  const names = only.split(',').map((name) => name.trim());
  const unknown = names.find((name) => !(SELECTABLE as readonly string[]).includes(name));
  if (unknown !== undefined) throw new UsageError(`--only must name scenarios among ${SELECTABLE.join(', ')}; got "${unknown}"`);
  return SELECTABLE.filter((name) => names.includes(name));
}

/** The growth mode needs room for a baseline below it: at least 2,000. */
function rowCount(raw: string): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 2_000) || value > 100_000_000) throw new UsageError(`--rows must be a whole number from 2000 to 100000000, got "${raw}"`);
  return value;
}

function seconds(name: string, raw: string, min: number): number {
  const value = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min) || value > 3600) throw new UsageError(`${name} must be a number of seconds from ${min} to 3600, got "${raw}"`);
  return value;
}

function count(name: string, raw: string): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1) || value > 100_000) throw new UsageError(`${name} must be a whole number from 1 to 100000, got "${raw}"`);
  return value;
}
