import { comparePositions, type CollectionNotificationRecord, type LogPosition } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { Listeners } from '../pubsub/listeners.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';
import { createAnnouncer } from './feed-announcer.ts';
import { createShortfall, DEFAULT_HELD_BACK_WARNING_MS } from './feed-shortfall.ts';

/** How often a replica reads the log unwoken: the most a lost pub/sub message delays live delivery. */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** Notifications per read; a read goes on page by page until one comes back short. */
const PAGE_SIZE = 500;
/**
 * The least time between two `notificationsStored` messages of one replica while commits keep
 * coming: instead of one message per turn waking Redis and every replica (docs/benchmarks.md, "What shapes the code").
 */
export const DEFAULT_ANNOUNCE_INTERVAL_MS = 10;

/**
 * Why a read ran: a wake-up (another replica's message, this replica's commit, or the loss of the
 * pub/sub link), the safety-net timer, or a retry of a read that stopped short of a position known
 * to be committed (not settled yet).
 */
export type ReadTrigger = 'wake' | 'timer' | 'retry';

export type FeedListener = (notification: CollectionNotificationRecord) => void;

/** One listener's place on the log: it gets every notification after `position`, until `stop()`. */
export interface FeedFollowing {
  readonly position: LogPosition;
  stop(): void;
}

/** A follower of the store's log that listeners join: the notification feed, and the confirmed feed behind it. */
export interface LogFollower {
  /** The position of the last notification handed out or passed. */
  readonly position: LogPosition;
  /**
   * Registers `listener` from the current position, which is returned: it is handed exactly the
   * notifications after it (those the follower hands out). Synchronous, so nothing can be handed
   * out between the two.
   */
  follow(listener: FeedListener): FeedFollowing;
}

/**
 * This replica's notification feed: its follower of the store's log of notifications (called a
 * feed in code, so that "log" there always means the logger). It reads the settled log by position
 * and hands each new notification to every local listener, in position order, once; one read serves
 * them all. What it hands out is always read from its own store: pub/sub messages only wake it.
 */
export interface NotificationFeed extends LogFollower {
  /** The position of the last notification handed out or passed (at start, the newest settled). */
  readonly position: LogPosition;
  /** Calls `listener` whenever the feed has moved on (a commit here, or new notifications read); returns the remover. */
  onAdvance(listener: () => void): () => void;
  /**
   * Says that this replica committed a notification at `committed`, the log then being settled
   * through `settled` (the store's InsertResult): wakes this replica's reader at once, and every
   * replica through pub/sub. Never fails: a lost message only leaves the others to their timer.
   */
  announce(committed: LogPosition, settled: LogPosition): void;
  close(): Promise<void>;
}

export interface NotificationFeedDeps {
  store: NotificationStore;
  pubsub: PubSub;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Starts following the log from the store's newest settled notification, woken by every replica's
 * `notificationsStored` messages and by a timer, since pub/sub may lose messages (Redis at most
 * once). It reads only the settled log, where nothing can later appear below a position already read.
 */
export async function startNotificationFeed(deps: NotificationFeedDeps): Promise<NotificationFeed> {
  const reader = createFeedReader(deps, await deps.store.settledHead());
  const announcer = createAnnouncer(deps, DEFAULT_ANNOUNCE_INTERVAL_MS);
  const unsubscribe = await deps.pubsub.subscribe('notificationsStored', (message) => {
    // Its own come back too: what it committed, it was told of already.
    if (message.replica !== announcer.replica) reader.request('wake');
  });
  // Messages may have been lost just before the link dropped: read at once, not at the next tick.
  const stopWatching = deps.pubsub.onInterruption(() => reader.request('wake'));
  const timer = setInterval(() => reader.request('timer'), DEFAULT_POLL_INTERVAL_MS);
  timer.unref();

  let closing: Promise<void> | undefined;
  return {
    get position() {
      return reader.position;
    },
    follow: (listener) => reader.follow(listener),
    onAdvance: (listener) => reader.onAdvance(listener),
    announce(committed, settled) {
      reader.committed(committed, settled);
      if (!closing) announcer.announce();
    },
    close: () =>
      (closing ??= (async () => {
        clearInterval(timer);
        stopWatching();
        // The last turn's commits still reach the other replicas.
        await announcer.flush();
        await unsubscribe().catch((error: unknown) => deps.logger.debug({ err: error }, 'notification feed unsubscribe failed'));
        await reader.close();
      })()),
  };
}

/**
 * The reading half, a small state machine: `idle`, or `reading` (with at most one more read asked
 * for meanwhile, however many requests arrive), or `closed`. It holds the position and the listeners.
 */
function createFeedReader({ store, metrics, logger }: NotificationFeedDeps, start: LogPosition) {
  const listeners = new Listeners<CollectionNotificationRecord>(logger, 'notification feed');
  const advanced = new Listeners<undefined>(logger, 'notification feed advance');
  const shortfall = createShortfall(
    logger,
    { pollIntervalMs: DEFAULT_POLL_INTERVAL_MS, heldBackWarningMs: DEFAULT_HELD_BACK_WARNING_MS },
    () => request('retry'),
  );
  let state: { kind: 'idle' } | { kind: 'reading'; again: ReadTrigger | undefined; done: Promise<void> } | { kind: 'closed' } = {
    kind: 'idle',
  };
  let position = start;
  let failing = false;
  metrics.logPosition.set(position.seq);

  const moveTo = (next: LogPosition) => {
    if (comparePositions(next, position) <= 0) return;
    position = next;
    // A settled position between two transactions' notifications (seq 0) names no notification.
    if (next.seq > 0) metrics.logPosition.set(next.seq);
  };
  const counted = async <T>(trigger: ReadTrigger, read: () => Promise<T>): Promise<T> => {
    const result = await read();
    metrics.logReads.inc({ trigger, outcome: 'ok' });
    return result;
  };

  /** Reads until caught up; with nobody to hand notifications to, only moves to the settled head. */
  async function readOnce(trigger: ReadTrigger): Promise<void> {
    if (listeners.size === 0) {
      const head = await counted(trigger, () => store.settledHead());
      // Whoever follows meanwhile is owed what lies after the position it was given: read for it.
      if (listeners.size === 0) return moveTo(head);
    }
    for (;;) {
      const page = await counted(trigger, () => store.listAfter({ after: position, limit: PAGE_SIZE }));
      for (const notification of page) {
        // A page never overlaps the position; the guard makes sure nothing is handed out twice.
        if (comparePositions(notification.position, position) <= 0) continue;
        moveTo(notification.position);
        listeners.handOut(notification);
      }
      if (page.length < PAGE_SIZE || state.kind === 'closed') break;
    }
    // Woken from outside, it knows nothing of what was committed: its own store says, so a commit
    // not settled yet is retried soon rather than left to the timer.
    if (trigger === 'wake' && listeners.size > 0) shortfall.expect(await store.committedHead());
  }

  async function run(first: ReadTrigger): Promise<void> {
    for (let trigger: ReadTrigger | undefined = first; trigger !== undefined;) {
      if (state.kind !== 'reading') return;
      state.again = undefined;
      const from = position;
      try {
        await readOnce(trigger);
        if (comparePositions(position, from) > 0) advanced.handOut(undefined);
        if (failing) logger.info({ position }, 'reading the notification log again');
        failing = false;
        // Only delivery waits on what is committed but not settled: with nobody listening, no hurry.
        shortfall.check(position, listeners.size > 0);
      } catch (error) {
        metrics.logReads.inc({ trigger, outcome: 'error' });
        // Once per outage, not once a second: the timer keeps retrying from the same position.
        if (!failing) logger.warn({ err: error, position }, 'could not read the notification log; retrying');
        failing = true;
      }
      trigger = state.kind === 'reading' ? state.again : undefined;
    }
    if (state.kind === 'reading') state = { kind: 'idle' };
  }

  /** Asks for a read: one starts now, or one more runs after the read in progress. */
  function request(trigger: ReadTrigger): void {
    if (state.kind === 'reading') state.again ??= trigger;
    else if (state.kind === 'idle') {
      const reading: { kind: 'reading'; again: ReadTrigger | undefined; done: Promise<void> } = {
        kind: 'reading',
        again: undefined,
        done: Promise.resolve(),
      };
      state = reading;
      reading.done = run(trigger);
    }
  }

  return {
    get position() {
      return position;
    },
    request,
    follow(listener: FeedListener): FeedFollowing {
      return { position, stop: listeners.add(listener) };
    },
    onAdvance: (listener: () => void) => advanced.add(listener),
    /**
     * This replica committed a notification at `committed`, the log being settled through `settled`.
     * With listeners, read unless it was handed out already; with nobody listening, move to `settled`.
     */
    committed(committed: LogPosition, settled: LogPosition) {
      if (state.kind === 'closed') return;
      shortfall.expect(committed);
      if (listeners.size === 0) {
        const from = position;
        moveTo(settled);
        if (comparePositions(position, from) > 0) advanced.handOut(undefined);
      } else if (comparePositions(committed, position) > 0) request('wake');
    },
    async close() {
      const reading = state.kind === 'reading' ? state.done : undefined;
      state = { kind: 'closed' };
      shortfall.stop();
      await reading;
      listeners.clear();
      advanced.clear();
    },
  };
}
