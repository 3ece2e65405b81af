// Confirmation with the bank: every notification stored PENDING is asked of the bank's collection
// service (op 16 by settlementId, op 15 by sessionId once that keeps failing) in the background, and
// its answer recorded on it for good. What waits is the store's: this replica claims it under a
// lease, so a restart or a kill loses nothing and no two replicas ask about one notification at once.
// One notification's trouble is its own (a backoff of its own); only the bank's trouble pauses.
import { performance } from 'node:perf_hooks';
import { withinDeadline } from '../async/deadline.ts';
import type { CollectionNotificationRecord } from '../domain/index.ts';
import { UpstreamError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { ConfirmationQueue } from '../store/types.ts';
import type { CollectionClient } from '../upstream/types.ts';
import { createRecorder } from './confirmation-recorder.ts';
import { failureKind, slowDown as isSlowDown } from '../upstream/failure-kind.ts';
import { askBy, failedAsk, verdictOf } from './confirmation-verdict.ts';

/** How often a replica claims unwoken: what other replicas left (their leases ended) and what is due again. */
const SWEEP_INTERVAL_MS = 1_000;
/** The first pause while the bank cannot answer; it doubles up to MAX_PAUSE_MS. */
const FIRST_PAUSE_MS = 2_000;
/**
 * The longest pause; with the sweep after it, at most 30 s pass between two asks, so a recovered
 * bank is seen within half a minute.
 */
const MAX_PAUSE_MS = 30_000 - SWEEP_INTERVAL_MS;
/** How long close() waits for the asks in flight; one left over is given back, PENDING, for the next start or another replica. */
const CLOSE_WAIT_MS = 2_000;

export interface ConfirmerDeps {
  confirmations: Pick<ConfirmationQueue, 'claim' | 'record' | 'retry' | 'defer'>;
  bank: Pick<CollectionClient, 'verifyBySettlementId' | 'verifyBySessionId'>;
  metrics: Metrics;
  logger: Logger;
  /** Told once outcomes are recorded: the confirmed feed reads the log of confirmations. */
  onDecided: () => void;
}

export interface ConfirmerOptions {
  /** `CONFIRMATION_CONCURRENCY`: the most asks of the bank in flight at once on this replica. */
  concurrency: number;
  /** The longest one ask of the bank can take (`BANK_TIMEOUT_MS`): a claim's lease covers the asks of everything claimed. */
  askMs: number;
  /** `CONFIRMATION_NOT_FOUND_RECHECK_S` in ms: how far apart the two not-found answers that NOT_AT_BANK needs must be. */
  notFoundRecheckMs: number;
}

/** This replica's confirmer. */
export interface Confirmer {
  /** A notification was stored PENDING here, its write taking `storedInMs`: claim it now rather than at the next sweep. */
  wake(storedInMs?: number): void;
  /** Takes no more work, waits a while for the asks in flight, records their answers and gives back the rest. */
  close(): Promise<void>;
}

/**
 * Starts confirming: claims due PENDING notifications (woken by this replica's `00`s and by a
 * sweep), asks the bank about up to a window of them at once, and records each answer with the
 * others of its turn in one write. The window is `concurrency` while the bank keeps up: it halves on
 * a 429, a 503 or a time-out and grows back by one per answer. While the bank itself cannot answer,
 * the whole confirmer pauses (doubling from 2 s, never more than 30 s between two asks), and then a
 * single ask about a notification that has not failed on its own probes the bank before the others.
 */
export function startConfirmer(deps: ConfirmerDeps, options: ConfirmerOptions): Confirmer {
  const { concurrency, askMs, notFoundRecheckMs } = options;
  const { confirmations, bank, metrics, logger } = deps;
  const held: CollectionNotificationRecord[] = [];
  /** The asks in flight, by the notification asked about. */
  const inFlight = new Map<Promise<void>, CollectionNotificationRecord>();
  let due = true;
  let claiming: Promise<void> | undefined;
  let pause: { delayMs: number; dueAt: number; until: number; since: number; timer: NodeJS.Timeout } | undefined;
  let window = concurrency;
  let storeFailing = false;
  let closed = false;

  const load = watchLoad();
  const recorder = createRecorder(deps, () => (load.busy ? BUSY_RECORD_DELAY_MS : 0));
  // After a failure, one ask at a time until one is answered; while deliveries keep this replica's
  // event loop busy, one at a time too, spaced out: the 00s come first.
  const slots = () => (pause || load.busy ? 1 : window);
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
    const room = 2 * slots() - inFlight.size - held.length;
    if (due && !claiming && room > 0 && (room >= slots() || inFlight.size === 0)) {
      claiming = claim(room).finally(() => {
        claiming = undefined;
        pump();
      });
    }
  }

  async function claim(limit: number): Promise<void> {
    // Cleared first: a wake during the claim asks for another.
    due = false;
    // Everything claimed is asked about within its lease: each waits for a free slot, at most
    // limit / slots asks of the bank ahead of it, and then for its own.
    const leaseMs = askMs * (Math.ceil(limit / slots()) + 1);
    try {
      // A paused confirmer's probe is a notification that has not failed on its own; with none, any.
      let claimed = pause ? await confirmations.claim({ limit: 1, leaseMs, probe: true }) : [];
      if (claimed.length === 0) claimed = await confirmations.claim({ limit, leaseMs });
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
    let atBank;
    try {
      atBank =
        askBy(record) === 'sessionId'
          ? await bank.verifyBySessionId(record.sessionId.trim())
          : await bank.verifyBySettlementId(record.settlementId);
    } catch (error) {
      return failed(record, error);
    }
    window = Math.min(concurrency, window + 1);
    resume();
    const result = verdictOf(record, atBank, { now: Date.now(), recheckMs: notFoundRecheckMs });
    if (result.kind === 'outcome') recorder.outcome(record, result.outcome);
    else recorder.retry(result.retry);
  }

  /**
   * The bank could not answer: the notification stays PENDING. A failure about it alone gives it a
   * backoff of its own and the others go on; the bank's own trouble pauses the whole confirmer, and
   * defers this one past the pause, so the probe that follows asks about another.
   */
  async function failed(record: CollectionNotificationRecord, error: unknown): Promise<void> {
    const code = error instanceof UpstreamError ? error.code : 'INTERNAL';
    metrics.confirmationFailures.inc({ code });
    if (isSlowDown(error)) slowDown();
    if (failureKind(error) === 'about-this-transfer') {
      // The bank answered, if not about this one: it is up.
      resume();
      const retry = failedAsk(record, Date.now());
      logger.warn(
        { code, settlementId: record.settlementId, failedAsks: record.confirmation.failedAsks + 1, retryInMs: retry.delayMs },
        'the bank could not confirm this notification; it stays PENDING and is asked again after its backoff, the others go on',
      );
      return recorder.retry(retry);
    }
    const now = Date.now();
    if (!pause || now >= pause.until) {
      const delayMs = pause ? Math.min(pause.delayMs * 2, MAX_PAUSE_MS) : FIRST_PAUSE_MS;
      if (!pause)
        logger.warn(
          { code, pauseMs: delayMs },
          "the bank's collection service could not confirm a notification; confirmations pause and are retried with backoff",
        );
      else logger.debug({ code, pauseMs: delayMs }, 'the bank still cannot confirm; pausing longer');
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
    // What this replica held is due again when the pause ends; the one that failed, a sweep after the probe.
    await Promise.all([
      deferOrLeave(held.splice(0), Math.max(0, pause.dueAt - now)),
      deferOrLeave([record], pause.until - now + SWEEP_INTERVAL_MS),
    ]);
  }

  /** The bank answered an ask: a pause, if any, is over. */
  function resume(): void {
    if (!pause) return;
    logger.info({ pausedMs: Date.now() - pause.since }, "the bank's collection service answers again: confirmations resume");
    clearTimeout(pause.timer);
    pause = undefined;
  }

  /** The bank asks us to slow down: half the window, and what is held beyond what it can ask within the lease goes back. */
  function slowDown(): void {
    const before = window;
    window = Math.max(1, Math.floor(window / 2));
    if (window < before) logger.debug({ window }, 'the bank is slowing down: fewer confirmations in flight');
    void giveBack(held.splice(2 * window));
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

  const giveBack = (records: readonly CollectionNotificationRecord[]) => deferOrLeave(records, 0);

  const sweep = setInterval(() => {
    due = true;
    pump();
  }, SWEEP_INTERVAL_MS);
  sweep.unref();
  pump();

  let closing: Promise<void> | undefined;
  return {
    wake(storedInMs = 0) {
      load.stored(storedInMs);
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

/** The window `watchLoad` looks at, and how many deliveries in it (200 a second) may make it busy. */
const LOAD_WINDOW_MS = 100;
const BUSY_DELIVERIES = 20;
/**
 * While deliveries arrive that fast, asks of the bank step aside once the event loop is busy this
 * share of the window (on SQLite the webhook's writes run on it), or once the webhook's writes take
 * this long on average (on PostgreSQL the cost is in the database, where the event loop does not see
 * it): beyond either, the webhook's replies would wait behind them.
 */
const BUSY_UTILIZATION = 0.8;
const BUSY_STORE_MS = 5;
const BUSY_WINDOWS = 3;
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
 * second or more, and the event loop that answers the bank was busy most of the time or the store's
 * writes slowed. Below that, confirmation keeps pace with what arrives; above it, the 00s come first
 * and the backlog is confirmed once they ease. A loop busy with something else (a collection, a
 * large read) at a few deliveries a second never makes each confirmation wait for the busy spacing.
 */
function watchLoad() {
  let [stored, storeMs] = [0, 0];
  /** Windows in a row that were loaded; busy from BUSY_WINDOWS on, so one slow fsync or collection does not flip it. */
  let loaded = 0;
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    const heavy = stored >= BUSY_DELIVERIES && (utilization >= BUSY_UTILIZATION || storeMs / stored >= BUSY_STORE_MS);
    loaded = heavy ? loaded + 1 : 0;
    last = now;
    [stored, storeMs] = [0, 0];
  }, LOAD_WINDOW_MS);
  timer.unref();
  return {
    get busy() {
      return loaded >= BUSY_WINDOWS;
    },
    stored(ms: number) {
      stored += 1;
      storeMs += ms;
    },
    stop: () => clearInterval(timer),
  };
}
