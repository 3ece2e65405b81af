import { createHistogram } from 'node:perf_hooks';
import type { LatencySummary } from './protocol.ts';

/** Latencies in ms, kept in µs: autocannon's own histogram keeps whole ms, too coarse for replies of one or two. */
export function createLatencyRecorder() {
  const histogram = createHistogram();
  const ms = (us: number) => (histogram.count === 0 ? 0 : us / 1000);
  return {
    record: (value: number) => histogram.record(Math.max(1, Math.round(value * 1000))),
    get count(): number {
      return histogram.count;
    },
    summary: (): LatencySummary => ({
      p50: ms(histogram.percentile(50)),
      p90: ms(histogram.percentile(90)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
    }),
  };
}
