// What a server process (the project's or a floor) watches in itself while a scenario runs: memory,
// the event loop, and for the project the webhook's store writes (node:sqlite runs on the event loop).
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { BatchTimes, BatchTimer } from './batch-times.ts';

/** MiB. */
export interface MemorySample {
  rss: number;
  heapUsed: number;
}

/** The server process during one scenario's measured run. */
export interface ServerSide {
  /** How late the event loop ran a timer (p99, max), in ms: a stall shows here. */
  loopDelayMs: { p99: number; max: number };
  /** Share of the wall time the event loop was busy, 0 to 1: near 1, the server is the bottleneck. */
  loopUtilization: number;
  /**
   * CPU the process used, in cores (1 = one core all the time; GC and libuv threads can add more).
   * Well below `loopUtilization`, the loop was busy but off the CPU: other processes took it.
   */
  cpuCores: number;
  /** Highest memory seen (each figure on its own). */
  peak: MemorySample;
  /** The store's batch writes and how long each took (on SQLite the event loop was held as long); none for a floor. */
  batches: BatchTimes | undefined;
}

const SAMPLE_MS = 100;
/** The delay monitor's timer interval; every sample includes it, so it is subtracted. */
const LOOP_RESOLUTION_MS = 5;
const MiB = 1024 * 1024;

export function sampleMemory(): MemorySample {
  const { rss, heapUsed } = process.memoryUsage();
  return { rss: rss / MiB, heapUsed: heapUsed / MiB };
}

function higher(a: MemorySample, b: MemorySample): MemorySample {
  return { rss: Math.max(a.rss, b.rss), heapUsed: Math.max(a.heapUsed, b.heapUsed) };
}

/** Starts sampling memory every 100 ms and watching the event loop; `begin()`/`end()` bracket a scenario. */
export function startMonitors(store?: BatchTimer) {
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  let overall = sampleMemory();
  let scenario = overall;
  let utilizationAtStart = performance.eventLoopUtilization();
  let cpuAtStart = process.cpuUsage();
  let startedAt = performance.now();
  const timer = setInterval(() => {
    const now = sampleMemory();
    overall = higher(overall, now);
    scenario = higher(scenario, now);
  }, SAMPLE_MS);
  timer.unref();

  const lateMs = (ns: number) => Math.max(ns / 1e6 - LOOP_RESOLUTION_MS, 0);
  return {
    /** Starts a scenario's measurements afresh (called again when its warm-up ends). */
    begin(): void {
      loop.reset();
      store?.reset();
      scenario = sampleMemory();
      utilizationAtStart = performance.eventLoopUtilization();
      cpuAtStart = process.cpuUsage();
      startedAt = performance.now();
    },
    end(): ServerSide {
      scenario = higher(scenario, sampleMemory());
      overall = higher(overall, scenario);
      const cpu = process.cpuUsage(cpuAtStart);
      return {
        loopDelayMs: { p99: lateMs(loop.percentile(99)), max: lateMs(loop.max) },
        loopUtilization: performance.eventLoopUtilization(utilizationAtStart).utilization,
        cpuCores: (cpu.user + cpu.system) / 1000 / (performance.now() - startedAt),
        peak: scenario,
        batches: store?.read(),
      };
    },
    /** The highest memory seen since the start. */
    peak: (): MemorySample => overall,
    stop(): void {
      clearInterval(timer);
      loop.disable();
    },
  };
}

export type Monitors = ReturnType<typeof startMonitors>;
