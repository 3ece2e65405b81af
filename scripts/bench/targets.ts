// The orchestrator's side of the server processes (ours, app-host.ts, and each floor): each forked on
// a loopback port 0 with --expose-gc, asked for its measurements over IPC, and stopped at the end
// (closed, then killed if it lingers).
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { HostCall, HostCalls, HostMessage } from './protocol.ts';

const FILES = {
  app: './app-host.ts',
  receiver: './floors/receiver.ts',
  'pg-receiver': './floors/pg-receiver.ts',
  subgraph: './floors/subgraph.ts',
  broadcaster: './floors/broadcaster.ts',
  'collection-bank': './collection-bank.ts',
} as const;
export type TargetKind = keyof typeof FILES;

const START_TIMEOUT_MS = 60_000;
const CLOSE_TIMEOUT_MS = 15_000;

export interface Target {
  /** e.g. "ours", "ours #2", "bare receiver". */
  name: string;
  baseUrl: string;
  /** From fork to listening, ms: for ours, start-up with the store opened and migrated. */
  startMs: number;
  call<C extends HostCall>(call: C): Promise<HostCalls[C]>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/**
 * Forks a target with nothing of the caller's environment but PATH and NODE_ENV, plus `env`, and Node's
 * `flags` beside --expose-gc; resolves once it listens.
 */
export async function startTarget(kind: TargetKind, name: string, env: Record<string, string> = {}, flags: string[] = []): Promise<Target> {
  const started = performance.now();
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    PORT: '0',
    ...(process.env.NODE_ENV ? { NODE_ENV: process.env.NODE_ENV } : {}),
  };
  const child = fork(new URL(FILES[kind], import.meta.url), [], {
    execArgv: ['--expose-gc', ...flags],
    env: { ...base, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  running.add(child);
  const exited = once(child, 'exit').then(() => running.delete(child));
  const gone = () => new Error(`${name} exited (${child.signalCode ?? `code ${child.exitCode}`})`);
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let listening: (baseUrl: string) => void = () => {};
  child.on('message', (message: HostMessage) => {
    if (message.type === 'listening') return listening(message.baseUrl);
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(`${name}: ${message.error}`));
    else waiter?.resolve(message.value);
  });
  void exited.then(() => {
    for (const waiter of pending.values()) waiter.reject(gone());
    pending.clear();
  });

  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not listen within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    listening = (url) => (clearTimeout(timer), resolve(url));
    void exited.then(() => (clearTimeout(timer), reject(gone())));
  }).catch((error: Error) => {
    child.kill('SIGKILL');
    throw error;
  });
  const startMs = performance.now() - started;

  let nextId = 0;
  const call = <C extends HostCall>(hostCall: C) =>
    new Promise<HostCalls[C]>((resolve, reject) => {
      const id = (nextId += 1);
      pending.set(id, { resolve: resolve, reject });
      child.send({ id, call: hostCall });
    });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
    await call('close').catch(() => child.kill('SIGKILL'));
    await exited;
    clearTimeout(timer);
  };
  return { name, baseUrl, startMs, call, stop };
}

/** Kills every server process still running (on Ctrl-C, or after a failure). */
export function killTargets(): void {
  for (const child of running) child.kill('SIGKILL');
}
