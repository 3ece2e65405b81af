// `npm run bench -- --tracing`: the cost of tracing. The same scenarios run with tracing off, then
// with the OpenTelemetry SDK started in the server process the way main.ts starts it (OTLP
// http/protobuf, every span sampled, the default batch settings), exporting to a sink process.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { context, propagation, trace } from '@opentelemetry/api';
import { startTracing } from '../../src/telemetry/sdk.ts';

/** The scenarios measured with and without tracing: a cached query and the webhook's durable path. */
export const TRACING_SCENARIOS = ['query-banks', 'webhook-00'] as const;

export interface BenchTracing {
  /** e.g. "OTLP http/protobuf to 127.0.0.1:41234 (a sink process), sampler always_on". */
  description: string;
  /** Flushes, stops the SDK and the sink; resolves with what the sink received. */
  stop(): Promise<{ requests: number; bytes: number }>;
}

const OTEL_ENV = { OTEL_TRACES_SAMPLER: 'always_on', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_SERVICE_NAME: 'bank-subgraph-bench' };

async function message<T>(child: ChildProcess, type: string): Promise<T> {
  for (;;) {
    const [received] = (await once(child, 'message')) as [{ type: string } & T];
    if (received.type === type) return received;
  }
}

/** Starts the sink and the SDK in this process; the app's spans go to the sink from now on. */
export async function startBenchTracing(): Promise<BenchTracing> {
  const sink = fork(fileURLToPath(new URL('./trace-sink.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await message<{ port: number }>(sink, 'listening');
  // The SDK reads process.env, as it does in main.ts.
  const saved = { ...process.env };
  Object.assign(process.env, OTEL_ENV, { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
  const tracing = await startTracing(process.env);
  if (!tracing) throw new Error('tracing did not start');
  return {
    description: `${tracing.description} (a sink process), sampler always_on`,
    async stop() {
      await tracing.shutdown();
      // Back to the no-op API, so nothing measured after this is traced.
      trace.disable();
      context.disable();
      propagation.disable();
      process.env = saved;
      sink.send({ type: 'stats' });
      const stats = await message<{ requests: number; bytes: number }>(sink, 'stats');
      sink.disconnect();
      return stats;
    },
  };
}

/** The figures a comparison needs from one row of the report. */
interface Measured {
  scenario: string;
  perSecond: number;
  seconds: number;
  count: number;
  latencyMs: { p50: number; p99: number };
  server: { cpuCores: number } | undefined;
}

/** Server CPU per reply in ms: less swayed than throughput when other processes share the cores. */
function cpuMsPerReply(r: Measured): number {
  return r.server && r.count > 0 ? (r.server.cpuCores * r.seconds * 1000) / r.count : Number.NaN;
}

/** Tracing off against on, scenario by scenario: throughput, latency, server CPU per reply, as on/off ratios. */
export function tracingCostTable(reports: readonly Measured[], table: (header: string[], rows: string[][]) => string): string {
  const ratio = (on: number, off: number) => (off > 0 && Number.isFinite(on / off) ? `${(on / off).toFixed(2)}×` : '-');
  const rows = TRACING_SCENARIOS.flatMap((scenario) => {
    const off = reports.find((r) => r.scenario === scenario);
    const on = reports.find((r) => r.scenario === `${scenario} +tracing`);
    if (!off || !on) return [];
    return [[
      scenario,
      `${off.perSecond.toFixed(0)} → ${on.perSecond.toFixed(0)}`,
      ratio(on.perSecond, off.perSecond),
      `${off.latencyMs.p50.toFixed(1)} → ${on.latencyMs.p50.toFixed(1)}`,
      `${off.latencyMs.p99.toFixed(1)} → ${on.latencyMs.p99.toFixed(1)}`,
      `${cpuMsPerReply(off).toFixed(3)} → ${cpuMsPerReply(on).toFixed(3)}`,
      ratio(cpuMsPerReply(on), cpuMsPerReply(off)),
    ]];
  });
  return table(['tracing off → on', 'per s', 'ratio', 'p50 ms', 'p99 ms', 'server cpu ms/reply', 'ratio'], rows);
}
