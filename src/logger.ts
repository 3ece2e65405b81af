import { pino, type DestinationStream, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { withinDeadline } from './async/deadline.ts';
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

export interface LogOutput {
  /** Readable lines (pino-pretty) for a person at a terminal, instead of JSON lines. */
  pretty?: boolean;
  /** Where lines go; stdout when not given. */
  destination?: DestinationStream;
}

/** The batched stdout of each JSON logger made here, for flushLogs. */
type BatchedOutput = ReturnType<typeof pino.destination>;
const batchedOutputs = new WeakMap<Logger, BatchedOutput>();

/**
 * The process logger: secrets censored, the active trace's ids on each line, whichever the format.
 *
 * JSON lines, the default, are for machines (pipes, files, containers): they are written in batches
 * off the request path (sonic-boom, asynchronously, at most 100 ms late) rather than one blocking
 * write per line, which a busy webhook pays for on every delivery (docs/benchmarks.md, "What shapes the code"). pino flushes
 * what is buffered when the process exits, even on a crash; only a kill -9 can lose the last 100 ms.
 *
 * Pretty lines are for a terminal, where a person reads them as they come: one line per entry,
 * local time, written at once, so the last line before an exit is never lost.
 */
export function createLogger(level: LogLevel, output: LogOutput = {}): Logger {
  const options = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'bank-subgraph' },
    // trace_id/span_id of the active span; nothing while tracing is off (no span is ever active then).
    mixin: activeTraceIds,
  };
  if (level === 'silent') return pino(options);
  if (output.pretty) {
    const pretty = pinoPretty({
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      // Every line is ours: the service name says nothing to a person at its terminal.
      ignore: 'pid,hostname,service',
      sync: true,
      ...(output.destination === undefined ? {} : { destination: output.destination }),
    });
    return pino(options, pretty);
  }
  if (output.destination !== undefined) return pino(options, output.destination);
  const batched = pino.destination({ dest: 1, sync: false, minLength: BUFFER_BYTES, periodicFlush: FLUSH_MS });
  const logger = pino(options, batched);
  batchedOutputs.set(logger, batched);
  return logger;
}

/**
 * Writes what `logger` still holds, waiting at most `withinMs`: before an exit, so a reader that is
 * gone or stalled can cost the last lines but never the exit. The process's exit writes what is
 * left synchronously (pino), and sonic-boom retries such a write for ever while stdout answers
 * EPIPE or EAGAIN: a flush that fails here is where a reader gone shows (pino then drops every
 * later line), and one that does not end in time gives the output up (abandonLogOutput).
 */
export async function flushLogs(logger: Logger, withinMs: number): Promise<void> {
  const output = batchedOutputs.get(logger);
  if (output === undefined) return; // pretty and given destinations write each line as it comes
  // Ends on an error as well: an EPIPE has made pino drop whatever follows.
  const flushed = new Promise<void>((resolve) => output.flush(() => resolve()));
  if ((await withinDeadline(flushed, withinMs, 'late')) === 'late') abandonLogOutput(logger);
}

/**
 * Gives `logger`'s batched output up: what it still holds, and any later line, is dropped, so an exit
 * never waits on a reader (pino does the same itself once stdout answers EPIPE). For exits that
 * cannot wait for flushLogs: a second signal, the drain's last deadline.
 */
export function abandonLogOutput(logger: Logger): void {
  const output = batchedOutputs.get(logger);
  if (output === undefined) return;
  const drop = () => undefined;
  Object.assign(output, { write: drop, flush: (done?: () => void) => done?.(), flushSync: drop, end: drop });
}
