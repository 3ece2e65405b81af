// The server side of the bench: the subgraph in this process, and the load processes it forks.
import { fork } from 'node:child_process';
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createNotificationStore } from '../../src/store/index.ts';
import { createLatencyRecorder } from './latency.ts';
import type { ChildMessage, LatencySummary, LoadJob, LoadResult, ParentMessage } from './protocol.ts';
import { timeInserts, type TimedStore } from './timed-store.ts';

export interface BenchApp {
  app: App;
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  storePath: string;
  /** The store's file system, e.g. "ext4": on tmpfs an fsync costs nothing and the figures flatter. */
  filesystem: string;
  /** What one fsync of a small write costs there, measured before the load. */
  fsyncMs: LatencySummary;
  /** The app's store, its inserts timed. */
  timedStore: TimedStore;
  /** Closes the app and removes its directory. */
  close(): Promise<void>;
}

/**
 * Starts the subgraph on the embedded default (sandbox bank, in-memory pub/sub) with a SQLite file
 * store in a fresh directory, so webhook writes take the real durable path (WAL, synchronous=FULL).
 */
export async function startBenchApp(parentDir: string = tmpdir()): Promise<BenchApp> {
  const dir = mkdtempSync(join(parentDir, 'bank-subgraph-bench-'));
  const storePath = join(dir, 'collections.db');
  // A fixed environment, not process.env: a .env naming Postgres or Redis would change what is measured.
  // Only NODE_ENV passes, since graphql-js reads it from process.env anyway (its development checks).
  const config = loadConfig({
    NODE_ENV: process.env.NODE_ENV,
    PORT: '0',
    HOST: '127.0.0.1',
    UPSTREAM_MODE: 'sandbox',
    STORE_URL: `sqlite:${storePath}`,
    PUBSUB_URL: 'memory:',
    LOG_LEVEL: 'silent',
  });
  let app: App | undefined;
  let timedStore: TimedStore | undefined;
  try {
    const fsyncMs = probeFsync(dir);
    // The store the config names, built here only to time its inserts; createApp then uses it as is.
    timedStore = timeInserts(await createNotificationStore(config.storeUrl.reveal(), { logger: createLogger('silent') }));
    app = await createApp(config, { store: timedStore.store });
    const graphqlUrl = await app.listen();
    const close = async () => {
      await app!.close();
      // Given as an override, the store is ours to close, after the app has drained.
      await timedStore!.store.close();
      rmSync(dir, { recursive: true, force: true });
    };
    const baseUrl = graphqlUrl.replace(/\/graphql$/, '');
    return { app, baseUrl, storePath, filesystem: filesystemOf(dir), fsyncMs, timedStore, close };
  } catch (error) {
    await app?.close();
    await timedStore?.store.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Times 50 small writes each followed by fsync, as a commit with synchronous=FULL does. */
function probeFsync(dir: string): LatencySummary {
  const latency = createLatencyRecorder();
  const fd = openSync(join(dir, 'fsync-probe'), 'w');
  try {
    const page = Buffer.alloc(4096, 1);
    for (let i = 0; i < 50; i += 1) {
      const started = performance.now();
      writeSync(fd, page, 0, page.length, i * page.length);
      fsyncSync(fd);
      latency.record(performance.now() - started);
    }
  } finally {
    closeSync(fd);
    rmSync(join(dir, 'fsync-probe'), { force: true });
  }
  return latency.summary();
}

const FILESYSTEMS: Record<number, string> = {
  0x01021994: 'tmpfs (fsync is free: the durable path looks cheaper than on a disk)',
  0xef53: 'ext4',
  0x58465342: 'xfs',
  0x9123683e: 'btrfs',
  0x794c7630: 'overlayfs',
  0x65735546: 'fuse',
};

function filesystemOf(dir: string): string {
  const { type } = statfsSync(dir);
  return FILESYSTEMS[type] ?? `file system type 0x${type.toString(16)}`;
}

/** Waits until the app's subscription gauge reaches `target`; `live: false` after `timeoutMs`. */
export async function waitForSubscriptions(app: App, target: number, timeoutMs: number): Promise<{ live: boolean; active: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const active = await activeSubscriptions(app);
    if (active >= target) return { live: true, active };
    if (Date.now() > deadline) return { live: false, active };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function activeSubscriptions(app: App): Promise<number> {
  return (await app.services.metrics.activeSubscriptions.get()).values[0]?.value ?? 0;
}

export interface LoadHooks {
  /** The load process finished its warm-up. */
  onMeasuring(): void;
  /** Fan-out: `count` subscribers are connected; resolve once the app counts them live. */
  awaitSubscribers(count: number): Promise<{ live: boolean; active: number }>;
}

let current: ReturnType<typeof fork> | undefined;

/**
 * Runs one scenario in a forked load process (scripts/bench/load.ts) and resolves with its result
 * once that process has exited, so the next scenario starts on a quiet CPU.
 */
export function runInLoadProcess(job: LoadJob, hooks: LoadHooks): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./load.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    current = child;
    let outcome: { result: LoadResult } | { error: Error } | undefined;
    const send = (message: ParentMessage) => child.connected && child.send(message);
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'measuring') hooks.onMeasuring();
      else if (message.type === 'await-subscribers') void hooks.awaitSubscribers(message.count).then((reply) => send({ type: 'subscribers-live', ...reply }));
      else if (message.type === 'result') outcome = { result: message.result };
      else outcome = { error: new Error(message.message) };
    });
    child.on('error', (error) => (outcome ??= { error }));
    child.on('exit', (code, signal) => {
      current = undefined;
      if (outcome && 'result' in outcome) resolve(outcome.result);
      else reject(outcome?.error ?? new Error(`the load process exited (${signal ?? `code ${code}`}) without a result`));
    });
    send({ type: 'run', job });
  });
}

/** Stops the running load process, if any (on Ctrl-C). */
export function killLoadProcess(): void {
  current?.kill();
}
