// The gap between what a replica's notification feed has read and what it knows to be committed.
import { comparePositions, START_OF_LOG, type LogPosition } from '../domain/index.ts';
import type { Logger } from '../logger.ts';

/**
 * How long the log may stay short of a position known to be committed before a warning: a
 * transaction somewhere on the database holds the settled part back (see the store's listAfter).
 */
export const DEFAULT_HELD_BACK_WARNING_MS = 10_000;
/** The first retry of a read that stopped short of a committed position; it doubles up to the poll interval. */
const FIRST_RETRY_MS = 5;

/**
 * What the reader knows is committed but has not read: the settled part of the log lags a commit
 * while an older transaction runs. A read that stops short is retried after a short, doubling
 * delay (the poll interval at most) rather than left to the timer; a shortfall that lasts is
 * logged once as a warning, and its end once.
 */
export function createShortfall(
  logger: Logger,
  options: { pollIntervalMs: number; heldBackWarningMs: number; what?: string | undefined },
  retry: () => void,
) {
  const what = options.what ?? 'notification';
  let expected: LogPosition = START_OF_LOG;
  let since: number | undefined;
  let warned = false;
  let delay = FIRST_RETRY_MS;
  let timer: NodeJS.Timeout | undefined;
  return {
    expect(committed: LogPosition) {
      if (comparePositions(committed, expected) > 0) expected = committed;
    },
    /** After a read that reached `position`; `waited` when someone waits on what is short of it. */
    check(position: LogPosition, waited: boolean) {
      if (!waited || comparePositions(position, expected) >= 0) {
        if (warned) logger.info({ position, heldBackMs: Date.now() - since! }, `the ${what} log caught up`);
        since = undefined;
        warned = false;
        delay = FIRST_RETRY_MS;
        return;
      }
      since ??= Date.now();
      if (!warned && Date.now() - since >= options.heldBackWarningMs) {
        warned = true;
        logger.warn(
          { position, expected, heldBackMs: Date.now() - since },
          `live delivery is held back: the ${what} log has entries committed, but a transaction older than theirs is still open on the database`,
        );
      }
      clearTimeout(timer);
      timer = setTimeout(retry, delay);
      timer.unref();
      delay = Math.min(delay * 2, options.pollIntervalMs);
    },
    stop: () => clearTimeout(timer),
  };
}
