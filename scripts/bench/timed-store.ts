import { createHistogram } from 'node:perf_hooks';
import type { NotificationStore } from '../../src/store/types.ts';

/** How long inserts held the event loop, in ms. */
export interface InsertTimes {
  count: number;
  mean: number;
  p99: number;
  max: number;
}

/**
 * Wraps a store to time the synchronous part of each insert: node:sqlite blocks, so on SQLite that
 * is the whole transaction, commit and fsync included, during which the event loop serves nothing.
 * Timing the call itself (not the awaited promise) keeps other requests' queued work out of it.
 */
export function timeInserts(store: NotificationStore) {
  const micros = createHistogram();
  const timed: NotificationStore = {
    ...store,
    insert(notification) {
      const started = performance.now();
      const result = store.insert(notification);
      micros.record(Math.max(1, Math.round((performance.now() - started) * 1000)));
      return result;
    },
  };
  return {
    store: timed,
    reset: () => micros.reset(),
    read: (): InsertTimes => {
      if (micros.count === 0) return { count: 0, mean: 0, p99: 0, max: 0 };
      return { count: micros.count, mean: micros.mean / 1000, p99: micros.percentile(99) / 1000, max: micros.max / 1000 };
    },
  };
}

export type TimedStore = ReturnType<typeof timeInserts>;
