// Confirmation with the bank: every notification stored PENDING is asked of the bank's collection
// service (op 16, by settlementId) in the background, and its answer recorded on it for good. What
// waits is the store's: this replica claims it under a lease, so a restart or a kill loses nothing
// and no two replicas ask about one notification at once.
import { performance } from 'node:perf_hooks';
import { withinDeadline } from '../async/deadline.ts';
import {
  bankDifferences,
  type BankTransactionRecord,
  type CollectionNotificationRecord,
  type ConfirmationOutcome,
} from '../domain/index.ts';
import { UpstreamError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { ConfirmationQueue } from '../store/types.ts';
import type { CollectionClient } from '../upstream/types.ts';

/** How often a replica claims unwoken: what other replicas left (their leases ended) and what was deferred. */
const SWEEP_INTERVAL_MS = 1_000;
/** How long what failed is deferred at first; it doubles up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 1_000;
/**
 * The longest deferral while the bank is unavailable; with the sweep after it, at most 30 s pass
 * between two asks, so a recovered bank is seen within half a minute.
 */
const MAX_BACKOFF_MS = 30_000 - SWEEP_INTERVAL_MS;
/**
 * Failures about the one notification asked, not the bank as a whole: it refused the request (400),
 * or its answer about that transfer cannot be read. The others go on; this one is asked again after
 * the longest backoff. Failing that way this many times in a row, with no answer between, is taken
 * for the bank's trouble after all, and pauses the confirmer like any other failure.
 */
const ABOUT_ONE_NOTIFICATION: ReadonlySet<string> = new Set(['UPSTREAM_BAD_REQUEST', 'UPSTREAM_INVALID_RESPONSE']);
const FAILURES_OF_ONE_BEFORE_PAUSE = 3;
/** How long close() waits for the asks in flight; one left over is given back, PENDING, for the next start or another replica. */
const CLOSE_WAIT_MS = 2_000;

export interface ConfirmerDeps {
  confirmations: ConfirmationQueue;
  bank: Pick<CollectionClient, 'verifyBySettlementId'>;
  metrics: Metrics;
  logger: Logger;
  /** Told once outcomes are recorded: the confirmed feed reads how far the log is now decided. */
  onDecided: () => void;
}

export interface ConfirmerOptions {
  /** `CONFIRMATION_CONCURRENCY`: asks of the bank in flight at once on this replica. */
  concurrency: number;
  /** How long a claim holds a notification: longer than waiting for a free slot and one bank call. */
  leaseMs: number;
}

/** This replica's confirmer. */
export interface Confirmer {
  /** A notification was stored PENDING here: claim it now rather than at the next sweep. */
  wake(): void;
  /** Takes no more work, waits a while for the asks in flight, records their answers and gives back the rest. */
  close(): Promise<void>;
}

/**
 * Starts confirming: claims due PENDING notifications (woken by this replica's `00`s and by a
 * sweep), at most `concurrency` asks of the bank in flight, each answer recorded with the others of
 * its turn in one write. While the bank cannot answer, the whole confirmer pauses, not each
 * notification: one failed ask defers what it held and stops it for a backoff (doubling from 2 s,
 * never more than 30 s between two asks), after which a single ask probes the bank before the
 * others follow.
 */
export function startConfirmer(deps: ConfirmerDeps, options: ConfirmerOptions): Confirmer {
  const { concurrency, leaseMs } = options;
  const { confirmations, bank, metrics, logger } = deps;
  const held: CollectionNotificationRecord[] = [];
  /** The asks in flight, by the notification asked about. */
  const inFlight = new Map<Promise<void>, CollectionNotificationRecord>();
  let due = true;
  let claiming: Promise<void> | undefined;
  let pause: { delayMs: number; dueAt: number; until: number; since: number; timer: NodeJS.Timeout } | undefined;
  let storeFailing = false;
  let closed = false;
  /** Failed asks since the bank last answered one. */
  let failuresInARow = 0;

  const load = watchLoad();
  const recorder = createRecorder(deps, () => (load.busy ? BUSY_RECORD_DELAY_MS : 0));
  // After a failure, one ask at a time until one is answered; and while deliveries keep this replica
  // busy, one at a time too, spaced out: the 00s come first, the backlog is confirmed once they ease.
  const slots = () => (pause || load.busy ? 1 : concurrency);
  let nextBusyStart = 0;
  let spacing: NodeJS.Timeout | undefined;

  function pump(): void {
    if (closed || (pause && Date.now() < pause.until)) return;
    if (load.busy && held.length > 0 && inFlight.size === 0 && performance.now() < nextBusyStart) {
      spacing ??= setTimeout(() => {
        spacing = undefined;
        pump();
      }, nextBusyStart - performance.now());
      return;
    }
    while (inFlight.size < slots() && held.length > 0) start(held.shift()!);
    // Claims come in batches (up to twice the slots, once half of that is free), so a busy replica
    // writes a claim every few answers, not one per answer.
    const room = (pause ? 1 : 2 * concurrency) - inFlight.size - held.length;
    if (due && !claiming && room > 0 && (room >= concurrency || inFlight.size === 0)) {
      claiming = claim(room).finally(() => {
        claiming = undefined;
        pump();
      });
    }
  }

  async function claim(limit: number): Promise<void> {
    // Cleared first: a wake during the claim asks for another.
    due = false;
    try {
      const claimed = await confirmations.claim({ limit, leaseMs });
      if (claimed.length === limit) due = true;
      if (storeFailing) logger.info('claiming notifications to confirm again');
      storeFailing = false;
      if (closed) return await giveBack(claimed);
      held.push(...claimed);
    } catch (error) {
      if (!storeFailing) logger.warn({ err: error }, 'could not claim notifications to confirm with the bank; the sweep tries again');
      storeFailing = true;
    }
  }

  function start(record: CollectionNotificationRecord): void {
    if (load.busy) nextBusyStart = performance.now() + BUSY_SPACING_MS;
    const ask = confirm(record).finally(() => {
      inFlight.delete(ask);
      pump();
    });
    inFlight.set(ask, record);
  }

  async function confirm(record: CollectionNotificationRecord): Promise<void> {
    let atBank: BankTransactionRecord | null;
    try {
      atBank = await bank.verifyBySettlementId(record.settlementId);
    } catch (error) {
      return failed(record, error);
    }
    failuresInARow = 0;
    if (pause) {
      logger.info({ pausedMs: Date.now() - pause.since }, "the bank's collection service answers again: confirmations resume");
      clearTimeout(pause.timer);
      pause = undefined;
    }
    recorder.add(record, outcomeOf(record, atBank, new Date().toISOString()));
  }

  /**
   * The bank could not answer: the notification stays PENDING. A failure about it alone defers it;
   * any other pauses the whole confirmer, and defers this one past the pause, so the probe that
   * follows asks about another: one the bank keeps refusing never holds the rest back.
   */
  async function failed(record: CollectionNotificationRecord, error: unknown): Promise<void> {
    const code = error instanceof UpstreamError ? error.code : 'INTERNAL';
    metrics.confirmationFailures.inc({ code });
    failuresInARow += 1;
    if (ABOUT_ONE_NOTIFICATION.has(code) && failuresInARow < FAILURES_OF_ONE_BEFORE_PAUSE) {
      logger.warn(
        { code, settlementId: record.settlementId, retryInMs: MAX_BACKOFF_MS },
        'the bank could not confirm this notification; it stays PENDING and is asked again later, the others go on',
      );
      return deferOrLeave([record], MAX_BACKOFF_MS);
    }
    const now = Date.now();
    if (!pause || now >= pause.until) {
      const delayMs = pause ? Math.min(pause.delayMs * 2, MAX_BACKOFF_MS) : FIRST_BACKOFF_MS;
      if (!pause)
        logger.warn(
          { code, backoffMs: delayMs },
          "the bank's collection service could not confirm a notification; confirmations pause and are retried with backoff",
        );
      else logger.debug({ code, backoffMs: delayMs }, 'the bank still cannot confirm; pausing longer');
      clearTimeout(pause?.timer);
      // Spread a little, never longer than the delay: replicas do not all ask again at one instant.
      const dueAt = now + Math.round(delayMs * (0.8 + 0.2 * Math.random()));
      // This replica asks again one sweep after what it deferred is due: a replica that reaches the
      // bank takes it first, so one cut off from the bank never keeps a notification to itself.
      const until = dueAt + SWEEP_INTERVAL_MS;
      const timer = setTimeout(() => {
        due = true;
        pump();
      }, until - now);
      timer.unref();
      pause = { delayMs, dueAt, until, since: pause?.since ?? now, timer };
    }
    // What this replica held is due again when the pause ends; the one that failed, a sweep after
    // the probe.
    await Promise.all([
      deferOrLeave(held.splice(0), Math.max(0, pause.dueAt - now)),
      deferOrLeave([record], pause.until - now + SWEEP_INTERVAL_MS),
    ]);
  }

  async function deferOrLeave(records: readonly CollectionNotificationRecord[], delayMs: number): Promise<void> {
    if (records.length === 0) return;
    await confirmations
      .defer(
        records.map((one) => one.settlementId),
        delayMs,
      )
      .catch((deferError: unknown) => {
        logger.warn({ err: deferError }, 'could not defer notifications to confirm; they are taken up again once their lease ends');
      });
  }

  async function giveBack(records: readonly CollectionNotificationRecord[]): Promise<void> {
    if (records.length === 0) return;
    await confirmations
      .defer(
        records.map((one) => one.settlementId),
        0,
      )
      .catch((error: unknown) => {
        logger.warn({ err: error }, 'could not give back notifications to confirm; they are taken up again once their lease ends');
      });
  }

  const sweep = setInterval(() => {
    due = true;
    pump();
  }, SWEEP_INTERVAL_MS);
  sweep.unref();
  pump();

  let closing: Promise<void> | undefined;
  return {
    wake() {
      load.stored();
      due = true;
      pump();
    },
    close: () =>
      (closing ??= (async () => {
        closed = true;
        clearInterval(sweep);
        clearTimeout(spacing);
        load.stop();
        clearTimeout(pause?.timer);
        const unstarted = held.splice(0);
        await withinDeadline(Promise.allSettled([...inFlight.keys(), claiming]), CLOSE_WAIT_MS, undefined);
        // An answer that comes later is dropped (the recorder is closed): what is still asked goes back too.
        await recorder.close();
        await giveBack([...unstarted, ...inFlight.values()]);
      })()),
  };
}

/** The window `watchLoad` counts deliveries in, and how many make it busy (200 a second). */
const LOAD_WINDOW_MS = 100;
const BUSY_DELIVERIES = 20;
/** While busy, asks start at most this often: each costs the webhook's event loop and, on PostgreSQL, the database. */
const BUSY_SPACING_MS = 50;
/**
 * While busy, answers wait this long to be recorded together: spaced asks are answered one by one,
 * and each write (and the confirmed feed's read it wakes on every replica) would otherwise cost the
 * database as much as a batch of deliveries.
 */
const BUSY_RECORD_DELAY_MS = 250;

/**
 * Whether deliveries keep this replica busy: in the last window notifications were stored at 200 a
 * second or more. Each ask of the bank costs the event loop the webhook answers on and, on
 * PostgreSQL, two row writes the webhook's commits wait behind (the bench's confirmation scenario
 * measures how much), so then they go one at a time. The rate alone decides: on PostgreSQL the
 * cost is in the database, where this replica's event loop does not see it.
 */
function watchLoad() {
  let stored = 0;
  let busy = false;
  const timer = setInterval(() => {
    busy = stored >= BUSY_DELIVERIES;
    stored = 0;
  }, LOAD_WINDOW_MS);
  timer.unref();
  return {
    get busy() {
      return busy;
    },
    stored: () => void (stored += 1),
    stop: () => clearInterval(timer),
  };
}

/**
 * The bank's answer as an outcome. "Not found" is final: the bank sends op 14 only for a transfer it
 * has settled and recorded, and answers ops 15/16 from that record; its not-found answer is a signed
 * HTTP 200 in its own shape, never a fault (faults are errors here, and are asked again). So asking
 * again cannot make a forged or mistaken notification known, and a status, once decided, must never
 * change under an app that acted on it.
 */
function outcomeOf(record: CollectionNotificationRecord, atBank: BankTransactionRecord | null, checkedAt: string): ConfirmationOutcome {
  const { settlementId } = record;
  if (atBank === null) return { settlementId, status: 'NOT_AT_BANK', checkedAt, differences: [], acknowledgedByBank: null };
  const differences = bankDifferences(record, atBank);
  return {
    settlementId,
    status: differences.length > 0 ? 'MISMATCHED' : 'CONFIRMED',
    checkedAt,
    differences,
    acknowledgedByBank: atBank.acknowledged,
  };
}

/**
 * The outcomes of a turn, recorded together in one write once the turn is over (on SQLite, one fsync
 * on the connection the webhook writes on, whatever their number), or after `delayMs()` while the
 * replica is busy; then counted, logged, and told.
 */
function createRecorder({ confirmations, metrics, logger, onDecided }: ConfirmerDeps, delayMs: () => number) {
  let waiting: { record: CollectionNotificationRecord; outcome: ConfirmationOutcome }[] = [];
  let writing: Promise<void> = Promise.resolve();
  let scheduled = false;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  async function write(): Promise<void> {
    const batch = waiting;
    waiting = [];
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
      if (recorded[index]) report({ metrics, logger }, record, outcome);
    });
    if (recorded.some(Boolean)) onDecided();
  }

  return {
    add(record: CollectionNotificationRecord, outcome: ConfirmationOutcome) {
      // After close, an answer that came late is dropped: the notification stays PENDING under its lease.
      if (closed) return;
      waiting.push({ record, outcome });
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
function report(
  { metrics, logger }: Pick<ConfirmerDeps, 'metrics' | 'logger'>,
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
