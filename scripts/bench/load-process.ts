// The load processes the orchestrator forks: one per scenario run (scripts/bench/load.ts).
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, LoadJob, LoadResult, ParentMessage } from './protocol.ts';

export interface LoadHooks {
  /** The load process finished its warm-up. */
  onMeasuring(): void;
  /** Fan-out: `count` subscribers are connected; resolve once the servers count them live. */
  awaitSubscribers(count: number): Promise<{ live: boolean; active: number }>;
}

let current: ChildProcess | undefined;

/**
 * Runs one scenario in a forked load process and resolves with its result once that process has
 * exited, so the next scenario starts on a quiet CPU.
 */
export function runInLoadProcess(job: LoadJob, hooks: LoadHooks): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./load.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    current = child;
    let outcome: { result: LoadResult } | { error: Error } | undefined;
    const send = (message: ParentMessage) => child.connected && child.send(message);
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'measuring') hooks.onMeasuring();
      else if (message.type === 'await-subscribers') {
        hooks.awaitSubscribers(message.count).then(
          (reply) => send({ type: 'subscribers-live', ...reply }),
          () => send({ type: 'subscribers-live', live: false, active: 0 }),
        );
      } else if (message.type === 'result') outcome = { result: message.result };
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
