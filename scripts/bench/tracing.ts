// `npm run bench -- --tracing`: the cost of tracing. After the first run, `query-banks` and
// `webhook-00` run again against our server with the OpenTelemetry SDK started the way main.ts starts
// it (OTLP http/protobuf, every span sampled, default batching), exporting to a sink in its own
// process, so receiving spans costs the measured server nothing.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { table } from './report.ts';
import type { ScenarioReport } from './suite.ts';

/** The scenarios measured with and without tracing: a cached query and the webhook's durable path. */
export const TRACING_SCENARIOS = ['query-banks', 'webhook-00'] as const;

export interface TraceSink {
  /** The OTEL_* variables that point our server at the sink, every span sampled. */
  env: Record<string, string>;
  /** Stops the sink; resolves with what it received. */
  stop(): Promise<{ requests: number; bytes: number }>;
}

async function message<T>(child: ChildProcess, type: string): Promise<T> {
  for (;;) {
    const [received] = (await once(child, 'message')) as [{ type: string } & T];
    if (received.type === type) return received;
  }
}

/** Starts the sink process (scripts/bench/trace-sink.ts). */
export async function startTraceSink(): Promise<TraceSink> {
  const sink = fork(fileURLToPath(new URL('./trace-sink.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await message<{ port: number }>(sink, 'listening');
  return {
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_SERVICE_NAME: 'bank-subgraph-bench',
    },
    async stop() {
      sink.send({ type: 'stats' });
      const stats = await message<{ requests: number; bytes: number }>(sink, 'stats');
      sink.disconnect();
      return stats;
    },
  };
}

/** Tracing on against off, per scenario: throughput and p99 side by side, and their ratios. */
export function tracingCostTable(off: readonly ScenarioReport[], on: readonly ScenarioReport[]): string {
  const rows = TRACING_SCENARIOS.flatMap((scenario) => {
    const a = off.find((report) => report.side === 'ours' && report.scenario === scenario);
    const b = on.find((report) => report.scenario === scenario);
    if (!a || !b) return [];
    return [[
      scenario,
      a.perSecond.toFixed(0),
      b.perSecond.toFixed(0),
      `${(b.perSecond / a.perSecond).toFixed(2)}×`,
      a.latencyMs.p99.toFixed(1),
      b.latencyMs.p99.toFixed(1),
      `${(b.latencyMs.p99 / a.latencyMs.p99).toFixed(2)}×`,
    ]];
  });
  return table(['scenario', 'off /s', 'on /s', 'on/off', 'off p99 ms', 'on p99 ms', 'p99 on/off'], rows);
}
