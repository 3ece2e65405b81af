// The runs `npm run bench` makes: each starts its servers (ours and the floors it needs), runs the
// suite on them and stops them whatever happens. The SQLite run is ours on the embedded default; the
// PostgreSQL run is ours on PostgreSQL (+ Redis) against the PostgreSQL receiver, with two replicas
// against one when Redis is there; the tracing run repeats two scenarios with tracing on.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { measureColdStarts, type ColdStart, type FreshStore } from './cold-start.ts';
import type { BenchOptions } from './options.ts';
import { SCENARIOS } from './protocol.ts';
import { isolatedSchema, isolatedServices } from './replicas.ts';
import { FLOOR_OF, OUR_ROW_SUFFIX, runSuite, type FloorKind, type ScenarioReport, type SuiteTargets } from './suite.ts';
import { killTargets, startTarget, type Target } from './targets.ts';
import { startTraceSink, TRACING_SCENARIOS, tracingCostTable } from './tracing.ts';

export const FLOOR_LABELS: Record<FloorKind, string> = { receiver: 'bare receiver', subgraph: 'bare Apollo', broadcaster: 'broadcaster' };
export const PG_RECEIVER_LABEL = 'bare receiver (PostgreSQL)';

/** The environment of our server process: the sandbox bank, the given store and pub/sub, no logs. */
export function appEnv(storeUrl: string, pubsubUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return { UPSTREAM_MODE: 'sandbox', STORE_URL: storeUrl, PUBSUB_URL: pubsubUrl, LOG_LEVEL: 'silent', ...extra };
}

/** A webhook receiver's name and environment: with `--floor-row ours`, it stores our row. */
function receiver(options: BenchOptions, label: string, env: Record<string, string>): [string, Record<string, string>] {
  return options.floorRow === 'ours' ? [`${label}${OUR_ROW_SUFFIX}`, { ...env, FLOOR_ROW: 'ours' }] : [label, env];
}

/** The floors the selected scenarios need. */
function floorsNeeded(options: BenchOptions): FloorKind[] {
  const kinds = SCENARIOS.filter((scenario) => options.selected.includes(scenario)).map((scenario) => FLOOR_OF[scenario]);
  return [...new Set(kinds)];
}

const anyScenario = (options: BenchOptions) => SCENARIOS.some((scenario) => options.selected.includes(scenario));

/** Starts the targets, runs the suite on them, and stops them whatever happens. */
async function onTargets(start: () => Promise<SuiteTargets>, run: (targets: SuiteTargets) => Promise<ScenarioReport[]>) {
  const started = new Set<Target>();
  try {
    const targets = await start();
    for (const target of [...targets.ours, ...(targets.replicas ?? []), ...Object.values(targets.floors)]) started.add(target);
    return await run(targets);
  } finally {
    await Promise.all([...started].map((target) => target.stop()));
    killTargets();
  }
}

/** The first run: ours on its embedded default (SQLite file, in-memory pub/sub) beside every floor. */
export async function sqliteRun(options: BenchOptions, parentDir: string): Promise<ScenarioReport[]> {
  if (!anyScenario(options)) return [];
  const dir = mkdtempSync(join(parentDir, 'bank-subgraph-bench-'));
  try {
    return await onTargets(
      async () => {
        const ours = [await startTarget('app', 'ours', appEnv(`sqlite:${join(dir, 'collections.db')}`, 'memory:'))];
        const floors: SuiteTargets['floors'] = {};
        for (const kind of floorsNeeded(options)) {
          const [name, env] = kind === 'receiver' ? receiver(options, FLOOR_LABELS[kind], { BENCH_DIR: dir }) : [FLOOR_LABELS[kind], { BENCH_DIR: dir }];
          floors[kind] = await startTarget(kind, name, env);
        }
        return { ours, floors };
      },
      (targets) => runSuite(options, targets, '[sqlite]'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Where the PostgreSQL run stores and publishes. */
export interface PostgresServices {
  databaseUrl: string;
  /** Redis pub/sub and a second replica; without it, in-memory pub/sub and one process. */
  redisUrl: string | undefined;
}

/**
 * The PostgreSQL run: ours in a schema of its own (with Redis: a channel prefix of its own, and a
 * second replica, so every scenario runs on one and on two), the webhook against the PostgreSQL
 * receiver in a schema of its own. The other floors run only when `earlier` (the SQLite run's
 * reports) has none of their kind.
 */
export async function postgresRun(options: BenchOptions, services: PostgresServices, earlier: ScenarioReport[]): Promise<ScenarioReport[]> {
  if (!anyScenario(options)) return [];
  const ours = await isolatedServices(services.databaseUrl, services.redisUrl);
  const floorSchema = await isolatedSchema(services.databaseUrl);
  const measuredBefore = new Set(earlier.filter((r) => r.side === 'floor').map((r) => FLOOR_OF[r.scenario as keyof typeof FLOOR_OF]));
  try {
    return await onTargets(
      async () => {
        const env = appEnv(ours.storeUrl, ours.pubsubUrl, services.redisUrl ? { BENCH_CHANNEL_PREFIX: ours.channelPrefix } : {});
        // One after the other: the first migrates the schema.
        const first = await startTarget('app', 'ours', env);
        const replicas = services.redisUrl ? [first, await startTarget('app', 'ours #2', env)] : undefined;
        const floors: SuiteTargets['floors'] = {};
        for (const kind of floorsNeeded(options)) {
          if (kind === 'receiver') floors.receiver = await startTarget('pg-receiver', ...receiver(options, PG_RECEIVER_LABEL, { FLOOR_DATABASE_URL: floorSchema.url }));
          else if (!measuredBefore.has(kind)) floors[kind] = await startTarget(kind, FLOOR_LABELS[kind]);
        }
        return { ours: [first], replicas, floors };
      },
      (targets) => runSuite(options, targets, services.redisUrl ? '[postgres + redis]' : '[postgres]'),
    );
  } finally {
    await ours.drop();
    await floorSchema.drop();
  }
}

/** Cold starts of ours on PostgreSQL, each on a new schema (migrated as it starts), against the bare Apollo subgraph. */
export function postgresColdStarts(options: BenchOptions, databaseUrl: string, parentDir: string): Promise<ColdStart> {
  const freshSchema: FreshStore = async () => {
    const schema = await isolatedSchema(databaseUrl);
    return { storeUrl: schema.url, release: schema.drop };
  };
  return measureColdStarts(options.coldStarts, parentDir, freshSchema);
}

/** With --tracing: query-banks and webhook-00 again, ours alone, with tracing on and exporting to a sink. */
export async function tracingRun(options: BenchOptions, parentDir: string, off: ScenarioReport[]): Promise<ScenarioReport[]> {
  const sink = await startTraceSink();
  const dir = mkdtempSync(join(parentDir, 'bank-subgraph-bench-'));
  try {
    process.stderr.write(`tracing on: ${TRACING_SCENARIOS.join(', ')} again, every span exported to a sink process…\n`);
    const traced = { ...options, selected: TRACING_SCENARIOS.filter((scenario) => options.selected.includes(scenario)) };
    const env = appEnv(`sqlite:${join(dir, 'collections.db')}`, 'memory:', sink.env);
    const on = await onTargets(async () => ({ ours: [await startTarget('app', 'ours +tracing', env)], floors: {} }), (targets) =>
      runSuite(traced, targets, '[tracing on]'),
    );
    const received = await sink.stop();
    console.log(`\nTRACING ON against OFF (ours, SQLite; the sink received ${received.requests} exports, ${(received.bytes / 1024 / 1024).toFixed(1)} MiB)\n\n${tracingCostTable(off, on)}`);
    return on;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
