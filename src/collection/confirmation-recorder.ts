// What the confirmer writes: the bank's answers and the asks that decided nothing, gathered into one
// write per turn (or per delay while the replica is busy), then counted, logged and told.
import type { CollectionNotificationRecord, ConfirmationOutcome, ConfirmationRetry } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { ConfirmationQueue } from '../store/types.ts';

export interface RecorderDeps {
  confirmations: Pick<ConfirmationQueue, 'record' | 'retry'>;
  metrics: Metrics;
  logger: Logger;
  /** Told once outcomes are recorded: the confirmed feed reads the log of confirmations. */
  onDecided: () => void;
}

/**
 * The answers of a turn, recorded together once the turn is over (on SQLite, one fsync on the
 * connection the webhook writes on, whatever their number), or after `delayMs()` while the replica
 * is busy; then counted, logged, and told. Retries go in one write beside them.
 */
export function createRecorder({ confirmations, metrics, logger, onDecided }: RecorderDeps, delayMs: () => number) {
  let outcomes: { record: CollectionNotificationRecord; outcome: ConfirmationOutcome }[] = [];
  let retries: ConfirmationRetry[] = [];
  let writing: Promise<void> = Promise.resolve();
  let scheduled = false;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  async function writeOutcomes(batch: typeof outcomes): Promise<void> {
    if (batch.length === 0) return;
    let recorded: boolean[];
    try {
      recorded = await confirmations.record(batch.map(({ outcome }) => outcome));
    } catch (error) {
      logger.error(
        { err: error, notifications: batch.length },
        "could not record the bank's answers; the notifications stay PENDING and are asked again once their lease ends",
      );
      return;
    }
    // Counted where recorded: a notification another replica decided first is counted there, once.
    batch.forEach(({ record, outcome }, index) => {
      if (recorded[index]) reportOutcome({ metrics, logger }, record, outcome);
    });
    if (recorded.some(Boolean)) onDecided();
  }

  async function writeRetries(batch: ConfirmationRetry[]): Promise<void> {
    if (batch.length === 0) return;
    await confirmations.retry(batch).catch((error: unknown) => {
      logger.warn({ err: error }, 'could not record asks of the bank that decided nothing; they are asked again once their lease ends');
    });
  }

  async function write(): Promise<void> {
    const [decided, undecided] = [outcomes, retries];
    outcomes = [];
    retries = [];
    await Promise.all([writeOutcomes(decided), writeRetries(undecided)]);
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    const flush = () => {
      clearTimeout(timer);
      scheduled = false;
      writing = writing.then(write).catch((error: unknown) => logger.error({ err: error }, "could not report the bank's answers"));
    };
    const delay = delayMs();
    if (delay === 0) setImmediate(flush);
    else timer = setTimeout(flush, delay);
  }

  return {
    /** The bank decided `record`. After close, an answer that came late is dropped: it stays PENDING under its lease. */
    outcome(record: CollectionNotificationRecord, outcome: ConfirmationOutcome) {
      if (closed) return;
      outcomes.push({ record, outcome });
      schedule();
    },
    /** An ask about a notification decided nothing: asked again after the retry's delay. */
    retry(retry: ConfirmationRetry) {
      if (closed) return;
      retries.push(retry);
      schedule();
    },
    async close() {
      clearTimeout(timer);
      scheduled = false;
      closed = true;
      writing = writing.then(write);
      await writing;
    },
  };
}

/** Counts an outcome recorded here and logs it: what is not CONFIRMED at error level, for whoever gives value on it. */
export function reportOutcome(
  { metrics, logger }: Pick<RecorderDeps, 'metrics' | 'logger'>,
  record: CollectionNotificationRecord,
  outcome: ConfirmationOutcome,
): void {
  metrics.confirmations.inc({ outcome: outcome.status });
  metrics.confirmationSeconds.observe({ outcome: outcome.status }, Math.max(0, Date.now() - Date.parse(record.receivedAt)) / 1000);
  const line = {
    settlementId: record.settlementId,
    sessionId: record.sessionId,
    outcome: outcome.status,
    differences: outcome.differences,
    acknowledgedByBank: outcome.acknowledgedByBank,
  };
  if (outcome.status === 'MISMATCHED') {
    logger.error(
      line,
      `collection notification MISMATCHED: the bank holds this transfer with other ${outcome.differences.join(', ')}; give no value on it`,
    );
  } else if (outcome.status === 'NOT_AT_BANK') {
    logger.error(
      line,
      'collection notification NOT_AT_BANK: the bank does not know this transfer (forged, or sent by mistake); give no value on it',
    );
  } else {
    logger.debug(line, 'collection notification confirmed with the bank');
  }
}
