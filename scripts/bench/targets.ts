// The orchestrator's side of the server processes: the project's (app-host.ts) and each floor
// (floors/*.ts), each forked on a loopback port 0 with --expose-gc, asked for its measurements over
// IPC, and stopped at the end (closed, then killed if it does not leave).
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { HostCall, HostCalls, HostMessage, HostRequest } from './protocol.ts';

/** The server processes the bench can start; the project's and the floors. */
export const TARGET_FILES = {
  app: './app-host.ts',
  receiver: './floors/receiver.ts',
  'pg-receiver': './floors/pg-receiver.ts',
  subgraph: './floors/subgraph.ts',
  broadcaster: './floors/broadcaster.ts',
  'summary-sum': './floors/summary-sum.ts',
} as const;
export type TargetKind = keyof typeof TARGET_FILES;

const START_TIMEOUT_MS = 60_000;
const CLOSE_TIMEOUT_MS = 15_000;

export interface Target {
  /** e.g. "ours", "ours #2", "bare receiver". */
  name: string;
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  pid: number;
  call<C extends HostCall>(call: C): Promise<HostCalls[C]>;
  /** Closes the server and waits for the process to leave (killed if it lingers). */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** The path of a target's file, for spawning it apart from the bench (the cold start). */
export function targetFile(kind: TargetKind): string {
  return fileURLToPath(new URL(TARGET_FILES[kind], import.meta.url));
}

/** The environment every server process gets: nothing of the caller's but PATH and NODE_ENV. */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', PORT: '0' };
  if (process.env.NODE_ENV) env.NODE_ENV = process.env.NODE_ENV;
  return env;
}

/** Forks a target and resolves once it listens. */
export async function startTarget(kind: TargetKind, name: string, env: Record<string, string> = {}): Promise<Target> {
  const child = fork(targetFile(kind), [], {
    execArgv: ['--expose-gc'],
    env: { ...baseEnv(), ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  running.add(child);
  const exited = once(child, 'exit').then(() => running.delete(child));
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 0;
  let listening: (baseUrl: string) => void = () => {};
  child.on('message', (message: HostMessage) => {
    if (message.type === 'listening') return listening(message.baseUrl);
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if ('error' in message) waiter?.reject(new Error(`${name}: ${message.error}`));
    else waiter?.resolve(message.value);
  });
  void exited.then(() => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${name} exited (code ${child.exitCode ?? child.signalCode})`));
    pending.clear();
  });

  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not listen within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    listening = (url) => (clearTimeout(timer), resolve(url));
    void exited.then(() => (clearTimeout(timer), reject(new Error(`${name} exited (code ${child.exitCode ?? child.signalCode}) before listening`))));
  }).catch((error: Error) => {
    child.kill('SIGKILL');
    throw error;
  });

  const call = <C extends HostCall>(hostCall: C) =>
    new Promise<HostCalls[C]>((resolve, reject) => {
      const id = (nextId += 1);
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, call: hostCall } satisfies HostRequest);
    });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
    await call('close').catch(() => child.kill('SIGKILL'));
    await exited;
    clearTimeout(timer);
  };
  return { name, baseUrl, pid: child.pid!, call, stop };
}

/** Kills every server process still running (on Ctrl-C, or after a failure). */
export function killTargets(): void {
  for (const child of running) child.kill('SIGKILL');
}
