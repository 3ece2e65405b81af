// A bound on waiting: what a promise settles to, or a stand-in once the time is up. Node's
// timers/promises keeps the timer; this adds the race, and cancels the timer as soon as the promise
// settles, so a finished wait leaves nothing to hold the process open. To stop the work itself at
// its deadline, give it `AbortSignal.timeout(ms)` instead. Imports nothing of ours.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What `work` settles to (a rejection passes on), or `otherwise` once `ms` pass first; `work` is not
 * stopped, and a rejection it meets after the deadline is dropped.
 */
export async function withinDeadline<T, F>(work: Promise<T>, ms: number, otherwise: F): Promise<T | F> {
  const settled = new AbortController();
  try {
    // Promise.race listens to both: the aborted timer's rejection and a late one of `work` are handled.
    return await Promise.race([work, sleep(ms, otherwise, { signal: settled.signal })]);
  } finally {
    settled.abort();
  }
}
