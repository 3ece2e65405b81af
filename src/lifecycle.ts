import closeWithGrace from 'close-with-grace';
import { withinDeadline } from './async/deadline.ts';
import { ConfigError } from './config/index.ts';
import { abandonLogOutput, flushLogs, type Logger } from './logger.ts';
import { logFlushTimeout, SHUTDOWN_DEADLINES, tracingFlushTimeout } from './shutdown.ts';

/** The result of `load`, or on a ConfigError its report on stderr and exit 1 (nothing is listening yet). */
export function exitOnConfigError<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}

/** An 'error' listener for stdout and stderr: a reader gone (EPIPE) is no fault of ours; anything else is thrown on. */
export function ignoreBrokenPipe(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE') throw error;
}

/** The ports a start listens on, by the variable that sets each: what a taken port is named by. */
export type ListenPorts = Partial<Record<'PORT' | 'WEBHOOK_PORT', number | undefined>>;

/**
 * The result of a start-up step, or on any failure a fatal log line and exit 1, the line written
 * first (within the shutdown budget's log share, whatever stdout does). A port already taken is one
 * line naming it, without a stack: the usual cause is another instance still running.
 */
export async function exitOnStartFailure<T>(logger: Logger, step: () => Promise<T>, ports: ListenPorts = {}): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const taken = takenPort(error, ports);
    if (taken) logger.fatal({ port: taken.port, variable: taken.variable }, `bank subgraph could not start: ${taken.message}`);
    else logger.fatal({ err: error }, `bank subgraph could not start: ${error instanceof Error ? error.message : String(error)}`);
    await flushLogs(logger, logFlushTimeout(0));
    process.exit(1);
  }
}

/** What to say of a listen that failed for its port being taken; undefined for any other failure. */
function takenPort(error: unknown, ports: ListenPorts): { port: number; variable: string | undefined; message: string } | undefined {
  const { code, port, address } = (error ?? {}) as { code?: unknown; port?: unknown; address?: unknown };
  if (code !== 'EADDRINUSE' || typeof port !== 'number') return undefined;
  const variable = (Object.keys(ports) as (keyof ListenPorts)[]).find((name) => ports[name] === port);
  const where = `port ${port}${variable ? ` (${variable})` : ''}${typeof address === 'string' ? ` on ${address}` : ''}`;
  const instead = variable ? `, or set ${variable} to a free port` : '';
  return { port, variable, message: `${where} is already in use: another instance may hold it (stop it${instead})` };
}

/** What the shutdown closes: the app, then the tracing SDK with the spans of the drained requests. */
export interface Closeable {
  app: { close(): Promise<void> };
  tracing: { shutdown(timeoutMs: number): Promise<void> } | undefined;
}

/**
 * On SIGTERM or SIGINT (and the other signals and uncaught errors close-with-grace watches), drains
 * through `app.close()`, flushes the traces, then the log, and exits: 0 once drained; 1 when the drain
 * ran out of time (connections cut at their deadline, or anything still closing at the tracing
 * flush's), when a step failed to close, or after an uncaught error. Every deadline comes from the
 * shutdown's budget (shutdown.ts), the log's flush included, so the exit always falls within the
 * contract's 10 seconds, whatever stdout does (a reader gone, or one that stopped reading).
 */
export function closeOnSignal({ app, tracing }: Closeable, logger: Logger): void {
  closeWithGrace(
    {
      delay: SHUTDOWN_DEADLINES.exitMs,
      // Its own messages (a failed close) go through our JSON log too.
      logger,
      // Neither waits for the log: close-with-grace exits as soon as they return.
      onSecondSignal: (signal) => {
        logger.error({ signal }, `second ${signal}: exiting 1 without waiting for the drain`);
        abandonLogOutput(logger);
      },
      onTimeout: () => {
        logger.error('the drain ran out of time: still closing at the exit deadline; exiting 1');
        abandonLogOutput(logger);
      },
    },
    async ({ signal, err }) => {
      const signalled = performance.now();
      const elapsed = () => performance.now() - signalled;
      if (err) logger.fatal({ err }, 'uncaught error; draining before exit');
      else logger.info({ signal }, 'draining: readiness is 503, finishing in-flight work');
      // Written at once, so a reader that is gone shows now rather than at the exit.
      void flushLogs(logger, logFlushTimeout(elapsed()));
      const closed = await withinDeadline(
        app.close().then(
          () => 'closed' as const,
          () => 'failed' as const, // app.close() has logged why
        ),
        SHUTDOWN_DEADLINES.tracingFlushMs - elapsed(),
        'late' as const,
      );
      // Spans of the drained requests are flushed last, after the app has finished them.
      await tracing?.shutdown(tracingFlushTimeout(elapsed()));
      const code = closed === 'closed' && !err ? 0 : 1;
      // The last line, so an operator sees how the drain ended rather than the process vanish.
      const durationMs = Math.round(elapsed());
      if (closed === 'late') logger.error({ durationMs }, 'the drain ran out of time: still closing at its deadline; exiting 1');
      else if (closed === 'failed') logger.error({ durationMs }, 'the drain did not finish cleanly; exiting 1');
      else if (err) logger.error({ durationMs }, 'drained after an uncaught error; exiting 1');
      else logger.info({ signal, durationMs }, 'drained, exiting');
      await flushLogs(logger, logFlushTimeout(elapsed()));
      process.exit(code);
    },
  );
}
