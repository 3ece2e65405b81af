/**
 * Starts the OpenTelemetry Node SDK from the standard OTEL_* variables, or nothing at all.
 *
 * The SDK reads every OTEL_* variable itself (exporter and protocol, endpoint and headers, sampler,
 * batch settings, resource attributes, propagators); this module only decides whether to start it,
 * names the service, and keeps metrics on prom-client and logs on pino. Without an exporter
 * endpoint (or an explicit OTEL_TRACES_EXPORTER) the SDK is not even loaded: the spans made
 * through @opentelemetry/api then go to its no-op tracer.
 */
import { withinDeadline } from '../async/deadline.ts';
import { TRACING_FLUSH_MS } from '../shutdown.ts';
import { markTracingStarted } from './tracer.ts';

export const DEFAULT_SERVICE_NAME = 'bank-subgraph';
/** Exporters the SDK knows by name; anything else in OTEL_TRACES_EXPORTER is not "something real". */
const KNOWN_EXPORTERS = new Set(['otlp', 'console', 'zipkin']);

type Env = Record<string, string | undefined>;

export interface Tracing {
  /** Where spans go, for the start-up log line: host and protocol, never a header or a path secret. */
  description: string;
  /**
   * Exports what is still batched and stops the SDK, for at most `timeoutMs` (the shutdown budget's
   * share for it by default): a collector that does not answer holds the exit no longer.
   */
  shutdown(timeoutMs?: number): Promise<void>;
}

const value = (env: Env, name: string) => env[name]?.trim() || undefined;

/** The exporters named in OTEL_TRACES_EXPORTER, lower case, "" and "null" dropped (as the SDK does). */
function namedExporters(env: Env): string[] {
  return (value(env, 'OTEL_TRACES_EXPORTER') ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '' && name !== 'null');
}

/**
 * Whether the environment asks for traces: an OTLP endpoint is set, or OTEL_TRACES_EXPORTER names a
 * real exporter; never when OTEL_SDK_DISABLED is true or the exporter is `none`.
 */
export function tracingRequested(env: Env): boolean {
  if (value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return false;
  const exporters = namedExporters(env);
  if (exporters[0] === 'none') return false;
  if (exporters.some((name) => KNOWN_EXPORTERS.has(name))) return true;
  return value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined || value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined;
}

/** The service name the SDK would not pick itself: ours, unless OTEL_SERVICE_NAME or the resource attributes name one. */
function serviceName(env: Env): string | undefined {
  if (value(env, 'OTEL_SERVICE_NAME')) return undefined;
  return /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '') ? undefined : DEFAULT_SERVICE_NAME;
}

function describe(env: Env): string {
  const exporters = namedExporters(env).filter((name) => KNOWN_EXPORTERS.has(name));
  if (exporters.length > 0 && !exporters.includes('otlp')) return exporters.join(', ');
  const protocol = value(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? value(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  const endpoint = value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  let host = protocol === 'grpc' ? 'localhost:4317' : 'localhost:4318';
  try {
    if (endpoint !== undefined) host = new URL(endpoint).host;
  } catch {
    host = 'an unreadable endpoint';
  }
  return `OTLP ${protocol} to ${host}`;
}

/**
 * Starts tracing when the environment asks for it (see `tracingRequested`); resolves to undefined,
 * having loaded nothing, when it does not. The SDK reads `process.env`, so `env` must be it (or a
 * copy of it): it is passed only so the decision is testable.
 */
export async function startTracing(env: Env): Promise<Tracing | undefined> {
  if (!tracingRequested(env)) return undefined;
  // Loaded only now: with tracing off, none of the SDK's modules is imported.
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const name = serviceName(env);
  const sdk = new NodeSDK({
    ...(name === undefined ? {} : { serviceName: name }),
    // Metrics stay on prom-client (/metrics) and logs on pino (stdout): no OTLP metric or log pipeline.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  markTracingStarted();
  let stopped: Promise<void> | undefined;
  return {
    description: describe(env),
    shutdown: (timeoutMs = TRACING_FLUSH_MS) =>
      (stopped ??= withinDeadline(
        sdk.shutdown().catch(() => undefined),
        timeoutMs,
        undefined,
      )),
  };
}
