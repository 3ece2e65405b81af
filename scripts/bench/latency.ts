import { createHistogram } from 'node:perf_hooks';
import type { LatencySummary } from './protocol.ts';

/**
 * A latency histogram in microseconds. autocannon's own histogram keeps whole milliseconds, too
 * coarse for replies that take one or two; node's HDR histogram keeps integers, hence µs.
 */
export function createLatencyRecorder() {
  const histogram = createHistogram();
  return {
    record(ms: number): void {
      histogram.record(Math.max(1, Math.round(ms * 1000)));
    },
    get count(): number {
      return histogram.count;
    },
    summary(): LatencySummary {
      if (histogram.count === 0) return { p50: 0, p90: 0, p99: 0, max: 0 };
      const ms = (us: number) => us / 1000;
      return {
        p50: ms(histogram.percentile(50)),
        p90: ms(histogram.percentile(90)),
        p99: ms(histogram.percentile(99)),
        max: ms(histogram.max),
      };
    },
  };
}
