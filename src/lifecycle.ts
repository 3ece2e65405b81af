import closeWithGrace from 'close-with-grace';
import { ConfigError } from './config/index.ts';
import type { Logger } from './logger.ts';

/** The drain must finish within the contract's 10 seconds; past this the process leaves anyway. */
export const EXIT_DEADLINE_MS = 9_500;

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

/**
 * On SIGTERM or SIGINT (and the other signals and uncaught errors close-with-grace watches), drains
 * through `app.close()` and exits: 0 once drained, 1 after an uncaught error or a failed close. Past
 * the deadline it exits 0 anyway, as the contract promises an exit within 10 seconds.
 */
export function closeOnSignal(app: { close(): Promise<void> }, logger: Logger): void {
  closeWithGrace(
    {
      delay: EXIT_DEADLINE_MS,
      // Its own messages (a second signal, a failed close) go through our JSON log too.
      logger,
      onTimeout: () => {
        logger.error('drain did not finish in time; exiting');
        process.exit(0);
      },
    },
    async ({ signal, err }) => {
      if (err) logger.fatal({ err }, 'uncaught error; draining before exit');
      else logger.info({ signal }, 'draining: readiness is 503, finishing in-flight work');
      await app.close();
    },
  );
}
