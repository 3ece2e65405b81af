import { parseArgs } from 'node:util';
import { SELECTABLE, type Selectable } from './protocol.ts';
import type { StoreKind } from './stores.ts';

export const USAGE = `usage: npm run bench -- [--store sqlite|postgres] [--duration 5] [--warmup 1] [--connections 100] [--rounds 3]
       [--subscribers 1000,10000] [--events 30] [--only <name>[,<name>…]] [--quick] [--json] [--dir <parent of the temp dirs>]
       npm run bench -- --rows 1000000 [--store sqlite|postgres] [--duration …] [--connections …] [--quick] [--json]
Names for --only: ${SELECTABLE.join(', ')}.
--store sqlite (the default): the SQLite run, then the PostgreSQL run when DATABASE_URL is set (with
  REDIS_URL: Redis pub/sub and two replicas against one). --store postgres: the PostgreSQL run alone.
--rows N: the growth mode instead: the figures on a store of a baseline and on one of N notifications.
--quick: seconds per scenario, to check that every one runs; its figures mean nothing. Options given win over it.
docs/benchmarks.md says what each scenario, floor and figure is.`;

export interface BenchOptions {
  store: StoreKind;
  /** The growth mode: the figures at a baseline and at this many stored notifications. */
  rows: number | undefined;
  /** Seconds of measured load per HTTP run. */
  durationS: number;
  /** Seconds of unmeasured load before it (and 5 unmeasured fan-out events when > 0). */
  warmupS: number;
  connections: number;
  /** Runs per side of each scenario with a floor (and of the read storm), taking turns; each side's median is reported. */
  rounds: number;
  /** One fan-out run per count. */
  subscribers: number[];
  /** Events per fan-out run; fewer for many subscribers. */
  events: number;
  selected: readonly Selectable[];
  quick: boolean;
  json: boolean;
  /** Where the SQLite files go; the OS's temp dir by default. */
  dir: string | undefined;
  help: boolean;
}

/** A mistake in the command line; the message names the option. */
export class UsageError extends Error {}

const DEFAULTS = { duration: '5', warmup: '1', connections: '100', rounds: '3', subscribers: '1000,10000', events: '30' };
const QUICK = { duration: '0.5', warmup: '0', connections: '10', rounds: '1', subscribers: '50', events: '5' };

/** Reads the command line; throws a UsageError naming the first bad option. */
export function readOptions(args: string[]): BenchOptions {
  const text = { type: 'string' } as const;
  const flag = { type: 'boolean', default: false } as const;
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        store: text,
        rows: text,
        duration: text,
        warmup: text,
        connections: text,
        rounds: text,
        subscribers: text,
        events: text,
        only: text,
        dir: text,
        quick: flag,
        json: flag,
        help: flag,
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const defaults = values.quick ? QUICK : DEFAULTS;
  const store = values.store ?? 'sqlite';
  if (store !== 'sqlite' && store !== 'postgres') throw new UsageError(`--store must be sqlite or postgres, got "${store}"`);
  if (values.rows !== undefined && values.only !== undefined) throw new UsageError('--rows runs the growth mode alone: leave out --only');
  return {
    store,
    rows: values.rows === undefined ? undefined : whole('--rows', values.rows, 2_000, 100_000_000),
    durationS: seconds('--duration', values.duration ?? defaults.duration, 0.1),
    warmupS: seconds('--warmup', values.warmup ?? defaults.warmup, 0),
    connections: whole('--connections', values.connections ?? defaults.connections),
    rounds: whole('--rounds', values.rounds ?? defaults.rounds),
    subscribers: (values.subscribers ?? defaults.subscribers).split(',').map((raw) => whole('--subscribers', raw.trim())),
    events: whole('--events', values.events ?? defaults.events),
    selected: selection(values.only),
    quick: values.quick,
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

function seconds(name: string, raw: string, min: number): number {
  const value = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min) || value > 3600) throw new UsageError(`${name} must be a number of seconds from ${min} to 3600, got "${raw}"`);
  return value;
}

function whole(name: string, raw: string, min = 1, max = 100_000): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min) || value > max) throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return value;
}
