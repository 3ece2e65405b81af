import closeWithGrace from 'close-with-grace';
import { ConfigError } from './config/index.ts';
import type { Logger } from './logger.ts';
import { SHUTDOWN_DEADLINES, tracingFlushTimeout } from './shutdown.ts';

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

/** The result of a start-up step, or on any failure a fatal log line and exit 1. */
export async function exitOnStartFailure<T>(logger: Logger, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    logger.fatal({ err: error }, `bank subgraph could not start: ${reason}`);
    process.exit(1);
  }
}

/** What the shutdown closes: the app, then the tracing SDK with the spans of the drained requests. */
export interface Closeable {
  app: { close(): Promise<void> };
  tracing: { shutdown(timeoutMs: number): Promise<void> } | undefined;
}

/**
 * On SIGTERM or SIGINT (and the other signals and uncaught errors close-with-grace watches), drains
 * through `app.close()`, flushes the traces, and exits: 0 once drained; 1 when the drain ran out of
 * time (connections cut at their deadline, or anything still closing at the exit deadline), when a
 * step failed to close, or after an uncaught error. Every deadline comes from the shutdown's budget
 * (shutdown.ts), so the exit always falls within the contract's 10 seconds.
 */
export function closeOnSignal({ app, tracing }: Closeable, logger: Logger): void {
  closeWithGrace(
    {
      delay: SHUTDOWN_DEADLINES.exitMs,
      // Its own messages (a second signal, a failed close) go through our JSON log too.
      logger,
      onTimeout: () => {
        logger.error('the drain ran out of time: still closing at the exit deadline; exiting 1');
        process.exit(1);
      },
    },
    async ({ signal, err }) => {
      const signalled = performance.now();
      if (err) logger.fatal({ err }, 'uncaught error; draining before exit');
      else logger.info({ signal }, 'draining: readiness is 503, finishing in-flight work');
      const closed = await app.close().then(
        () => true,
        () => false, // app.close() has logged why
      );
      // Spans of the drained requests are flushed last, after the app has finished them.
      await tracing?.shutdown(tracingFlushTimeout(performance.now() - signalled));
      if (!closed) {
        logger.error('the drain did not finish cleanly; exiting 1');
        process.exit(1);
      }
      // The last line of a clean stop, so an operator sees the drain completed rather than the process vanish.
      const durationMs = Math.round(performance.now() - signalled);
      if (err) logger.error({ durationMs }, 'drained after an uncaught error; exiting 1');
      else logger.info({ signal, durationMs }, 'drained, exiting');
    },
  );
}
