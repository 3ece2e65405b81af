import { createHistogram } from 'node:perf_hooks';
import type { BatchReport } from '../../src/store/batch.ts';

/** The store's batch writes and how long each took, in ms. */
export interface BatchTimes {
  count: number;
  mean: number;
  p99: number;
  max: number;
}

/**
 * Times the store's batch writes (group commit) from its own batch reports. node:sqlite blocks, so on
 * SQLite a batch's time is the whole transaction, commit and fsync included, during which the event
 * loop serves nothing; on PostgreSQL it is the round trips, during which the loop goes on.
 */
export function timeBatches() {
  const micros = createHistogram();
  return {
    onBatch: (report: BatchReport) => micros.record(Math.max(1, Math.round(report.ms * 1000))),
    reset: () => micros.reset(),
    read: (): BatchTimes => {
      if (micros.count === 0) return { count: 0, mean: 0, p99: 0, max: 0 };
      return { count: micros.count, mean: micros.mean / 1000, p99: micros.percentile(99) / 1000, max: micros.max / 1000 };
    },
  };
}

export type BatchTimer = ReturnType<typeof timeBatches>;
