// The runs of `npm run bench`, one per store: each starts its servers (ours and the floors it needs),
// runs the suite, the read storm and the worst raw-body read, and stops them whatever happens. The SQLite run is ours on the
// embedded default; the PostgreSQL run is ours on PostgreSQL (+ Redis: one replica and two), its
// webhook against the PostgreSQL floor, each in a schema of its own.
import { join } from 'node:path';
import { comparisonRows } from './compare.ts';
import { confirmationBench } from './confirmation.ts';
import type { BenchOptions } from './options.ts';
import { LONG_LIST, SCENARIOS } from './protocol.ts';
import { rawBodies } from './raw-bodies.ts';
import { readStorm } from './read-storm.ts';
import type { Row } from './report.ts';
import { appEnv, ownStore, type Services, type StoreKind } from './stores.ts';
import { FLOOR_OF, runSuite, TOKEN_SCENARIOS, type FloorKind, type ScenarioReport, type SuiteTargets } from './suite.ts';
import { DEVELOPMENT_ISSUER, DEVELOPMENT_JWKS_PATH } from '../../src/auth/development-key.ts';
import { signDevelopmentToken } from '../development-token.ts';
import { killTargets, startTarget, type Target } from './targets.ts';

export interface Run {
  name: StoreKind;
  title: string;
  rows: Row[];
  reports: ScenarioReport[];
}

/** The floors the selected scenarios need. */
const floorsNeeded = (options: BenchOptions): FloorKind[] => [
  ...new Set(SCENARIOS.filter((s) => options.selected.includes(s)).map((s) => FLOOR_OF[s])),
];

/** Remembers a started target, to be stopped at the end of its run. */
type Keep = (target: Promise<Target>) => Promise<Target>;

/** Starts the targets (`keep` remembers each), runs the suite on them, and stops them whatever happens. */
async function onTargets(start: (keep: Keep) => Promise<SuiteTargets>, title: string, options: BenchOptions) {
  const started: Target[] = [];
  const keep = async (target: Promise<Target>) => (started.push(await target), started.at(-1)!);
  try {
    return await runSuite(options, await start(keep), title);
  } finally {
    await Promise.all(started.map((target) => target.stop()));
    killTargets();
  }
}

/** The first run: ours on its embedded default (SQLite file, in-memory pub/sub) beside every floor. */
export async function sqliteRun(options: BenchOptions, parentDir: string): Promise<Run> {
  const store = await ownStore('sqlite', parentDir);
  try {
    const reports = await onTargets(
      async (keep) => {
        const ours = [await keep(startTarget('app', 'ours', appEnv(store.storeUrl, 'memory:')))];
        const floors: SuiteTargets['floors'] = {};
        for (const kind of floorsNeeded(options)) {
          const env: Record<string, string> = kind === 'receiver' ? { FLOOR_SQLITE_FILE: join(store.dir, 'receiver.db') } : {};
          floors[kind] = await keep(startTarget(kind, FLOOR_LABELS[kind], env));
        }
        const queries = TOKEN_SCENARIOS.some((scenario) => options.selected.includes(scenario));
        const withToken = queries ? await authenticated(keep, join(store.dir, 'authenticated.db')) : undefined;
        const longList = options.selected.includes('query-banks-600') ? await onLongList(keep, store.dir) : undefined;
        return { ours, floors, withToken, longList };
      },
      '[sqlite]',
      options,
    );
    const rows = comparisonRows(
      reports.filter((r) => r.side === 'ours'),
      reports.filter((r) => r.side === 'floor'),
      [],
      reports.filter((r) => r.side === 'token'),
    );
    const storm = options.selected.includes('read-storm') ? await readStorm(options, 'sqlite', parentDir) : undefined;
    const raw = options.selected.includes('raw-bodies') ? await rawBodies(options, 'sqlite', parentDir) : undefined;
    const confirmation = options.selected.includes('confirmation') ? await confirmationBench(options, 'sqlite', parentDir) : undefined;
    const title = 'SQLite file + in-memory pub/sub (the embedded default), one process';
    const [extraRows, extraReports] = [
      [storm, raw, confirmation].flatMap((part) => part?.rows ?? []),
      [storm, raw, confirmation].flatMap((part) => part?.reports ?? []),
    ];
    return { name: 'sqlite', title, rows: [...rows, ...extraRows], reports: [...reports, ...extraReports] };
  } finally {
    await store.drop();
  }
}

/**
 * Ours with authentication on (the development key, as the README's local try-out starts it), and a
 * token it accepts for the query scenarios: what verifying callers costs, against ours without it.
 */
async function authenticated(keep: Keep, sqliteFile: string): Promise<SuiteTargets['withToken']> {
  const target = await keep(startTarget('app', 'ours with a token', withAuthentication(appEnv(`sqlite:${sqliteFile}`, 'memory:'))));
  const token = await signDevelopmentToken({ scope: 'accounts:read', accounts: [], lifetimeS: 3_600 });
  return { target, headers: { authorization: `Bearer ${token}` } };
}

/** Authentication on, with the development key, as the README's local try-out starts it. */
const withAuthentication = (env: Record<string, string>) => ({
  ...env,
  AUTH_JWKS_URL: `file:${DEVELOPMENT_JWKS_PATH}`,
  AUTH_ISSUER: DEVELOPMENT_ISSUER,
});

/** `banks` on the long list: ours and ours with a token over a bank listing LONG_LIST banks, and bare Apollo serving the same. */
async function onLongList(keep: Keep, dir: string): Promise<SuiteTargets['longList']> {
  const list = { BENCH_BANK_LIST: String(LONG_LIST) };
  const named = (name: string) => `${name} (${LONG_LIST} banks)`;
  const ours = await keep(startTarget('app', named('ours'), { ...appEnv(`sqlite:${join(dir, 'long-list.db')}`, 'memory:'), ...list }));
  const withToken = await keep(
    startTarget('app', named('ours with a token'), {
      ...withAuthentication(appEnv(`sqlite:${join(dir, 'long-list-authenticated.db')}`, 'memory:')),
      ...list,
    }),
  );
  const floor = await keep(startTarget('subgraph', named(FLOOR_LABELS.subgraph), { FLOOR_BANK_LIST: String(LONG_LIST) }));
  return { ours, withToken, floor };
}

export const FLOOR_LABELS: Record<FloorKind, string> = { receiver: 'bare receiver', subgraph: 'bare Apollo', broadcaster: 'broadcaster' };

/**
 * The PostgreSQL run: ours in a schema of its own (with Redis, a second replica beside it, so every
 * scenario runs on one and on two), the webhook against the PostgreSQL floor in a schema of its own.
 * The other floors run only when `earlier` (the SQLite run) has not measured them.
 */
export async function postgresRun(options: BenchOptions, services: Services, earlier: ScenarioReport[], parentDir: string): Promise<Run> {
  const pubsubUrl = services.redisUrl ?? 'memory:';
  const ours = await ownStore('postgres', parentDir, services.databaseUrl);
  const floorStore = await ownStore('postgres', parentDir, services.databaseUrl);
  const measured = new Set(earlier.filter((r) => r.side === 'floor').map((r) => FLOOR_OF[r.scenario as keyof typeof FLOOR_OF]));
  try {
    const reports = await onTargets(
      async (keep) => {
        // One after the other: the first migrates the schema.
        const first = await keep(startTarget('app', 'ours', appEnv(ours.storeUrl, pubsubUrl)));
        const replicas = services.redisUrl
          ? [first, await keep(startTarget('app', 'ours #2', appEnv(ours.storeUrl, pubsubUrl)))]
          : undefined;
        const floors: SuiteTargets['floors'] = {};
        for (const kind of floorsNeeded(options)) {
          if (kind === 'receiver')
            floors.receiver = await keep(
              startTarget('pg-receiver', 'bare receiver (PostgreSQL)', { FLOOR_DATABASE_URL: floorStore.storeUrl }),
            );
          else if (!measured.has(kind)) floors[kind] = await keep(startTarget(kind, FLOOR_LABELS[kind]));
        }
        return { ours: [first], replicas, floors };
      },
      services.redisUrl ? '[postgres + redis]' : '[postgres]',
      options,
    );
    const floors = [...reports, ...earlier].filter((r) => r.side === 'floor');
    const rows = comparisonRows(
      reports.filter((r) => r.side === 'ours'),
      floors,
      reports.filter((r) => r.side === 'replicas'),
    );
    const storm = options.selected.includes('read-storm') ? await readStorm(options, 'postgres', parentDir, services) : undefined;
    const raw = options.selected.includes('raw-bodies') ? await rawBodies(options, 'postgres', parentDir, services) : undefined;
    const confirmation = options.selected.includes('confirmation')
      ? await confirmationBench(options, 'postgres', parentDir, services)
      : undefined;
    const title = `PostgreSQL + ${services.redisUrl ? 'Redis pub/sub, one process and two' : 'in-memory pub/sub, one process'}`;
    const [extraRows, extraReports] = [
      [storm, raw, confirmation].flatMap((part) => part?.rows ?? []),
      [storm, raw, confirmation].flatMap((part) => part?.reports ?? []),
    ];
    return { name: 'postgres', title, rows: [...rows, ...extraRows], reports: [...reports, ...extraReports] };
  } finally {
    await ours.drop();
    await floorStore.drop();
  }
}
