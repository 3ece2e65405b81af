import { pino, type Logger } from 'pino';
import { activeTraceIds } from './telemetry/tracer.ts';

export type { Logger };

/** pino's levels, `silent` included, as LOG_LEVEL accepts them. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Header and field names that carry credentials or tokens, censored wherever they appear in a log
 * line (Fastify request logs, upstream error context). A second net behind `Secret`.
 */
const REDACT_PATHS = [
  'req.headers.authorization',
  // Callers' tokens: an upgrade request's headers, graphql-ws connectionParams, wherever they are logged.
  'headers.authorization',
  '*.headers.authorization',
  'connectionParams.Authorization',
  'connectionParams.authorization',
  '*.connectionParams.Authorization',
  '*.connectionParams.authorization',
  '*.authorization',
  '*.Authorization',
  '*.token',
  'req.headers["x-auth-signature"]',
  'req.headers["x-access-token"]',
  'req.headers["x-refresh-token"]',
  'req.headers["router-secret"]',
  'req.headers.password',
  '*.password',
  '*.accessToken',
  '*.refreshToken',
  '*.secret',
];

/** Bytes of log lines gathered before one write to stdout; lines are never held longer than FLUSH_MS. */
const BUFFER_BYTES = 4096;
const FLUSH_MS = 100;

/**
 * The process logger: JSON lines on stdout, secrets censored, the active trace's ids on each line.
 * Lines are written in batches off the request path (sonic-boom, asynchronously, at most 100 ms
 * late) rather than one blocking write per line, which a busy webhook pays for on every delivery
 * (docs/benchmarks.md). pino flushes what is buffered when the process exits, even on a crash;
 * only a kill -9 can lose the last 100 ms of lines.
 */
export function createLogger(level: LogLevel): Logger {
  const options = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'bank-subgraph' },
    // trace_id/span_id of the active span; nothing while tracing is off (no span is ever active then).
    mixin: activeTraceIds,
  };
  if (level === 'silent') return pino(options);
  return pino(options, pino.destination({ dest: 1, sync: false, minLength: BUFFER_BYTES, periodicFlush: FLUSH_MS }));
}
