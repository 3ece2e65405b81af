import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { onCleanup } from './cleanup.ts';
import { waitFor } from './wait.ts';

/** A Redis server of the test's own on a free loopback port, which the test may stop and start again. */
export interface OwnRedis {
  url: string;
  /** Stops it as an outage would (SIGKILL: no goodbye to its clients). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

/** Whether `redis-server` can be run here; under CI=true its absence fails the suite instead. */
export function redisServerAvailable(): boolean {
  const found = spawnSync('redis-server', ['--version']).status === 0;
  if (!found && process.env.CI === 'true') throw new Error('redis-server is not on the PATH: CI=true requires it');
  return found;
}

/** Starts a Redis server that keeps nothing on disk, stopped after the test. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(
      () =>
        spawnSync('redis-cli', ['-p', String(port), 'ping'])
          .stdout?.toString()
          .includes('PONG')
          ? true
          : undefined,
      10_000,
    );
  };
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  await start();
  onCleanup(stop);
  return { url: `redis://127.0.0.1:${port}`, stop, start };
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
