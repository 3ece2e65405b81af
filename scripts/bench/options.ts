import { parseArgs } from 'node:util';
import { SCENARIOS, type ScenarioName } from './protocol.ts';
import { TRACING_SCENARIOS } from './tracing.ts';

export const USAGE = `usage: npm run bench -- [--duration 10] [--warmup 1] [--connections 50] [--subscribers 500]
       [--events 200] [--only <scenario>] [--json] [--dir <parent of the temp dir>] [--tracing]
Scenarios: ${SCENARIOS.join(', ')}.
--tracing runs query-banks and webhook-00 with tracing off, then on (OpenTelemetry, every span sampled).
Run with node --expose-gc (NODE_OPTIONS=--expose-gc npm run bench) to measure memory after a forced GC.`;

export interface BenchOptions {
  /** Seconds of measured load per HTTP scenario. */
  durationS: number;
  /** Seconds of unmeasured load before each HTTP scenario. */
  warmupS: number;
  connections: number;
  subscribers: number;
  events: number;
  scenarios: readonly ScenarioName[];
  json: boolean;
  /** Run the tracing scenarios twice: tracing off, then on. */
  tracing: boolean;
  /** Where the temp dir for the SQLite file is made; the OS's temp dir by default. */
  dir: string | undefined;
  help: boolean;
}

/** A mistake in the command line; the message says which option. */
export class UsageError extends Error {}

/** Reads the command line; throws a UsageError naming the first bad option. */
export function readOptions(args: string[]): BenchOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        duration: { type: 'string', default: '10' },
        warmup: { type: 'string', default: '1' },
        connections: { type: 'string', default: '50' },
        subscribers: { type: 'string', default: '500' },
        events: { type: 'string', default: '200' },
        only: { type: 'string' },
        json: { type: 'boolean', default: false },
        tracing: { type: 'boolean', default: false },
        dir: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const only = values.only;
  const all: readonly ScenarioName[] = values.tracing ? TRACING_SCENARIOS : SCENARIOS;
  if (only !== undefined && !(SCENARIOS as readonly string[]).includes(only)) {
    throw new UsageError(`--only must name a scenario (${SCENARIOS.join(', ')}), got "${only}"`);
  }
  if (values.tracing && only !== undefined && !(TRACING_SCENARIOS as readonly string[]).includes(only)) {
    throw new UsageError(`with --tracing, --only must name ${TRACING_SCENARIOS.join(' or ')}, got "${only}"`);
  }
  return {
    durationS: seconds('--duration', values.duration, 0.1),
    warmupS: seconds('--warmup', values.warmup, 0),
    connections: count('--connections', values.connections),
    subscribers: count('--subscribers', values.subscribers),
    events: count('--events', values.events),
    scenarios: only === undefined ? all : all.filter((scenario) => scenario === only),
    json: values.json,
    tracing: values.tracing,
    dir: values.dir,
    help: values.help,
  };
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
