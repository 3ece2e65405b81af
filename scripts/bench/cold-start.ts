// Cold start: the time from spawning a server process to its first successful GET /health/ready,
// polled every few milliseconds on a port chosen beforehand. Ours is `node src/main.ts` exactly as
// `npm start` runs it, on a fresh store each time (a SQLite file, or a PostgreSQL schema) or, for the
// growth mode, on a filled one; the floor is the bare Apollo subgraph, started the same way.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseEnv, targetFile } from './targets.ts';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const POLL_MS = 5;
const GIVE_UP_MS = 30_000;

export interface ColdStart {
  /** Median over the tries, in ms. */
  oursMs: number;
  floorMs: number;
  tries: number;
}

/** A new, empty store for one start (opening and migrating it is part of starting), and how to remove it. */
export type FreshStore = (attempt: number, dir: string) => Promise<{ storeUrl: string; release(): Promise<void> }>;

/** A new SQLite file in the cold starts' temp dir (removed with it). */
const freshSqliteFile: FreshStore = async (attempt, dir) => ({ storeUrl: `sqlite:${join(dir, `cold-${attempt}.db`)}`, release: async () => {} });

const oursEnv = (storeUrl: string) => ({ UPSTREAM_MODE: 'sandbox', STORE_URL: storeUrl, PUBSUB_URL: 'memory:', LOG_LEVEL: 'silent', HOST: '127.0.0.1' });

/** Measures each cold start `tries` times, alternating ours (on a fresh store each time) and the floor; medians. */
export async function measureColdStarts(tries: number, parentDir: string = tmpdir(), freshStore: FreshStore = freshSqliteFile): Promise<ColdStart> {
  const dir = mkdtempSync(join(parentDir, 'bench-cold-start-'));
  const ours: number[] = [];
  const floor: number[] = [];
  try {
    for (let i = 0; i < tries; i += 1) {
      const store = await freshStore(i, dir);
      try {
        ours.push(await timeToReady(MAIN, oursEnv(store.storeUrl), dir));
      } finally {
        await store.release();
      }
      floor.push(await timeToReady(targetFile('subgraph'), {}, dir));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { oursMs: median(ours), floorMs: median(floor), tries };
}

/** Ours alone, started `tries` times on the store at `storeUrl` as it is (the growth mode); the median, in ms. */
export async function measureStartup(storeUrl: string, tries: number, parentDir: string = tmpdir()): Promise<number> {
  const dir = mkdtempSync(join(parentDir, 'bench-cold-start-'));
  try {
    const times: number[] = [];
    for (let i = 0; i < tries; i += 1) times.push(await timeToReady(MAIN, oursEnv(storeUrl), dir));
    return median(times);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Spawns `file` with `env` on a free port and times it until /health/ready answers 200; then kills it. */
async function timeToReady(file: string, env: Record<string, string>, cwd: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  // cwd is a temp dir, so a .env in the checkout cannot change what main.ts starts.
  const child = spawn(process.execPath, [file], { cwd, env: { ...baseEnv(), ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = once(child, 'exit');
  try {
    while (performance.now() - started < GIVE_UP_MS) {
      if (child.exitCode !== null) throw new Error(`${file} exited (code ${child.exitCode}) before it was ready`);
      if ((await readyStatus(port)) === 200) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    throw new Error(`${file} was not ready within ${GIVE_UP_MS / 1000} s`);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

/** A port free now (the OS picks it, we release it): the process under test gets it next. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The status of GET /health/ready, or 0 when nothing answers yet. Raw HTTP/1.0: no client to warm up. */
function readyStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let reply = '';
    socket.on('connect', () => socket.write('GET /health/ready HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => (reply += chunk.toString('latin1')));
    socket.on('error', () => resolve(0));
    socket.on('close', () => resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(reply)?.[1] ?? 0)));
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
