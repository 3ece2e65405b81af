import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.ts';
import { activeTraceIds } from './telemetry/tracer.ts';

export type { Logger };

/**
 * Header and field names that carry credentials or tokens, censored wherever they appear in a log
 * line (Fastify request logs, upstream error context). A second net behind `Secret`.
 */
const REDACT_PATHS = [
  'req.headers.authorization',
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

/** The process logger: JSON lines on stdout, secrets censored, the active trace's ids on each line. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'bank-subgraph' },
    // trace_id/span_id of the active span; nothing while tracing is off (no span is ever active then).
    mixin: activeTraceIds,
  });
}
