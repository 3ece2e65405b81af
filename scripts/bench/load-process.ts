// The load processes the orchestrator forks, one per job (load.ts); the read storm runs two at once.
import { fork, type ChildProcess } from 'node:child_process';
import type { ChildMessage, LoadJob, LoadResult, ParentMessage } from './protocol.ts';

export interface LoadHooks {
  /** The load process finished its warm-up. */
  onMeasuring(): void;
  /** Fan-out: `count` subscribers are connected; resolve once the servers count them live. */
  awaitSubscribers?(count: number): Promise<{ live: boolean; active: number }>;
}

const running = new Set<ChildProcess>();

/** Runs one job in a forked load process; resolves once that process has exited, so the next job starts on a quiet CPU. */
export function runInLoadProcess(job: LoadJob, hooks: LoadHooks): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL('./load.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    running.add(child);
    let outcome: { result: LoadResult } | { error: Error } | undefined;
    const send = (message: ParentMessage) => child.connected && child.send(message);
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'measuring') hooks.onMeasuring();
      else if (message.type === 'await-subscribers') {
        const live = hooks.awaitSubscribers?.(message.count) ?? Promise.reject(new Error('no subscribers expected'));
        live.then(
          (reply) => send({ type: 'subscribers-live', ...reply }),
          () => send({ type: 'subscribers-live', live: false, active: 0 }),
        );
      } else if (message.type === 'result') outcome = { result: message.result };
      else outcome = { error: new Error(message.message) };
    });
    child.on('error', (error) => (outcome ??= { error }));
    child.on('exit', (code, signal) => {
      running.delete(child);
      if (outcome && 'result' in outcome) resolve(outcome.result);
      else reject(outcome?.error ?? new Error(`the load process exited (${signal ?? `code ${code}`}) without a result`));
    });
    send({ type: 'run', job });
  });
}

/** Stops every running load process (on Ctrl-C). */
export function killLoadProcesses(): void {
  for (const child of running) child.kill();
}
