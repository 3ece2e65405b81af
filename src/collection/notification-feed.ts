import type { Link } from '@opentelemetry/api';
import { comparePositions, START_OF_LOG, type CollectionNotificationRecord, type LogPosition } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';
import { linkToActiveSpan, tracePublish } from '../telemetry/webhook.ts';
import { createShortfall, DEFAULT_HELD_BACK_WARNING_MS } from './feed-shortfall.ts';

/** How often a replica reads the log unwoken: the most a lost pub/sub message delays live delivery. */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** Notifications per read; a read goes on page by page until one comes back short. */
const DEFAULT_PAGE_SIZE = 500;
/** Deliveries a publish span links to at most; one busy turn can hold thousands. */
const MAX_PUBLISH_LINKS = 128;
/**
 * The least time between two `notificationsStored` messages of one replica. The first after a quiet
 * spell goes out at once (the next turn); under a busy webhook, the commits of the next 10 ms then
 * share one, instead of one message per turn waking Redis and every replica (docs/benchmarks.md).
 */
export const DEFAULT_ANNOUNCE_INTERVAL_MS = 10;

/**
 * Why a read ran: a pub/sub wake-up (or loss of the link), the safety-net timer, or a retry of a
 * read that stopped short of a position known to be committed (not settled yet).
 */
export type ReadTrigger = 'wake' | 'timer' | 'retry';

export type FeedListener = (notification: CollectionNotificationRecord) => void;

/** One listener's place on the log: it gets every notification after `position`, until `stop()`. */
export interface FeedFollowing {
  readonly position: LogPosition;
  stop(): void;
}

/**
 * This replica's notification feed: its follower of the store's log of notifications (called a
 * feed in code, so that "log" there always means the logger). It reads the settled log by position
 * and hands each new notification to every local listener, in position order, once; one read serves
 * them all.
 */
export interface NotificationFeed {
  /** The position of the last notification handed out or passed (at start, the newest settled). */
  readonly position: LogPosition;
  /**
   * Registers `listener` from the current position, which is returned: it is handed exactly the
   * notifications after it. Synchronous, so nothing can be handed out between the two.
   */
  follow(listener: FeedListener): FeedFollowing;
  /**
   * Says that this replica committed a notification at `committed`, the log then being settled
   * through `settled` (the store's InsertResult): wakes this replica's reader at once, and every
   * replica's through pub/sub in one message for all the commits of a turn (of 10 ms, when busy).
   * Never fails: a lost message only leaves the others to their safety-net timer.
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

export interface NotificationFeedOptions {
  pollIntervalMs?: number;
  announceIntervalMs?: number;
  pageSize?: number;
  heldBackWarningMs?: number;
}

/**
 * Starts following the log from the store's newest settled notification: woken by every replica's
 * `notificationsStored` messages (published after each commit) and by a timer, since pub/sub may
 * lose messages (Redis at most once). It reads only the settled log, where nothing can later
 * appear below a position already read.
 */
export async function startNotificationFeed(deps: NotificationFeedDeps, options: NotificationFeedOptions = {}): Promise<NotificationFeed> {
  const { pollIntervalMs = DEFAULT_POLL_INTERVAL_MS, pageSize = DEFAULT_PAGE_SIZE, heldBackWarningMs = DEFAULT_HELD_BACK_WARNING_MS } = options;
  const reader = createFeedReader(deps, await deps.store.settledHead(), { pageSize, pollIntervalMs, heldBackWarningMs });
  const announcer = createAnnouncer(deps, options.announceIntervalMs ?? DEFAULT_ANNOUNCE_INTERVAL_MS);
  const unsubscribe = await deps.pubsub.subscribe('notificationsStored', (message) => {
    // Only hints: the store says what is new. Earlier releases sent neither position.
    reader.heard(isPosition(message) ? message : undefined, isPosition(message.settled) ? message.settled : undefined);
  });
  // Messages may have been lost just before the link dropped: read at once, not at the next tick.
  const stopWatching = deps.pubsub.onInterruption(() => reader.wake('wake'));
  const timer = setInterval(() => reader.wake('timer'), pollIntervalMs);
  timer.unref();

  let closing: Promise<void> | undefined;
  return {
    get position() {
      return reader.position;
    },
    follow: reader.follow,
    announce(committed, settled) {
      reader.heard(committed, settled);
      if (!closing) announcer.announce(committed, settled);
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

const isPosition = (value: unknown): value is LogPosition =>
  typeof (value as LogPosition | undefined)?.txid === 'number' && typeof (value as LogPosition).seq === 'number';

const later = (a: LogPosition, b: LogPosition) => (comparePositions(a, b) >= 0 ? a : b);

/**
 * The publishing half: positions announced in one event-loop turn (every commit of a busy webhook)
 * go out as one `notificationsStored` message with the highest of them. One message is published
 * at a time, and the next no sooner than `intervalMs` after the last began: what is announced
 * meanwhile goes out in it.
 */
function createAnnouncer({ pubsub, logger }: NotificationFeedDeps, intervalMs: number) {
  let highest = { committed: START_OF_LOG, settled: START_OF_LOG };
  let links: Link[] = [];
  /** Something was announced that no message sent so far carries. */
  let unsent = false;
  let sending: Promise<void> | undefined;
  let lastSent = Number.NEGATIVE_INFINITY;

  async function send() {
    unsent = false;
    lastSent = performance.now();
    const { committed, settled } = highest;
    const linked = links;
    links = [];
    try {
      const message = { txid: committed.txid, seq: committed.seq, settled: { txid: settled.txid, seq: settled.seq } };
      await tracePublish(pubsub.kind, 'notificationsStored', () => pubsub.publish('notificationsStored', message), linked);
    } catch (error) {
      logger.error({ err: error, ...committed }, 'stored notifications could not be announced; other replicas will read them on their next tick');
    }
  }

  const schedule = () => {
    const wait = lastSent + intervalMs - performance.now();
    sending = new Promise<void>((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)))
      .then(send)
      .finally(() => (unsent ? schedule() : (sending = undefined)));
  };

  return {
    announce(committed: LogPosition, settled: LogPosition) {
      highest = { committed: later(committed, highest.committed), settled: later(settled, highest.settled) };
      const link = linkToActiveSpan();
      if (link && links.length < MAX_PUBLISH_LINKS) links.push(link);
      unsent = true;
      if (!sending) schedule();
    },
    async flush() {
      while (sending) await sending;
    },
  };
}

/** The local listeners; one that throws never keeps a notification from the others. */
function createListeners(logger: Logger) {
  const listeners = new Set<FeedListener>();
  return {
    get size() {
      return listeners.size;
    },
    add: (listener: FeedListener) => void listeners.add(listener),
    remove: (listener: FeedListener) => void listeners.delete(listener),
    clear: () => listeners.clear(),
    handOut(notification: CollectionNotificationRecord) {
      for (const listener of [...listeners]) {
        try {
          listener(notification);
        } catch (error) {
          logger.error({ err: error }, 'log listener threw; the others still get the notification');
        }
      }
    },
  };
}

/**
 * Runs `work` one call at a time: a request while one runs schedules exactly one more run after it,
 * however many requests arrive. `work` must not throw.
 */
function coalesce(work: (trigger: ReadTrigger) => Promise<void>) {
  let running: Promise<void> | undefined;
  let again: ReadTrigger | undefined;
  const loop = async (first: ReadTrigger) => {
    for (let trigger: ReadTrigger | undefined = first; trigger; trigger = again) {
      again = undefined;
      await work(trigger);
    }
    running = undefined;
  };
  return {
    request(trigger: ReadTrigger) {
      if (running) again ??= trigger;
      else running = loop(trigger);
    },
    async settled() {
      while (running) await running;
    },
  };
}

interface ReaderOptions {
  pageSize: number;
  pollIntervalMs: number;
  heldBackWarningMs: number;
}

/** The reading half: the position, the listeners, and reads coalesced so that one at most runs. */
function createFeedReader(deps: NotificationFeedDeps, start: LogPosition, options: ReaderOptions) {
  const { store, metrics, logger } = deps;
  const listeners = createListeners(logger);
  const shortfall = createShortfall(logger, options, () => reads.request('retry'));
  let position = start;
  let failing = false;
  let closed = false;
  metrics.logPosition.set(position.seq);

  const moveTo = (next: LogPosition) => {
    position = next;
    // A settled position between two transactions' notifications (seq 0) names no notification.
    if (next.seq > 0) metrics.logPosition.set(next.seq);
  };

  async function readUntilCaughtUp(trigger: ReadTrigger) {
    if (listeners.size === 0) {
      // Nobody to hand notifications to: move to the settled head without reading a notification.
      // Whoever follows meanwhile is owed what lies after the position it was given, so then read.
      const head = await store.settledHead();
      metrics.logReads.inc({ trigger, outcome: 'ok' });
      if (listeners.size === 0) {
        if (comparePositions(head, position) > 0) moveTo(head);
        return;
      }
    }
    for (;;) {
      const page = await store.listAfter({ after: position, limit: options.pageSize });
      metrics.logReads.inc({ trigger, outcome: 'ok' });
      for (const notification of page) {
        // Cheap guard: a page never overlaps the position, but nothing is ever handed out twice.
        if (comparePositions(notification.position, position) <= 0) continue;
        position = notification.position;
        listeners.handOut(notification);
      }
      moveTo(position);
      if (page.length < options.pageSize || closed) return;
    }
  }

  const reads = coalesce(async (trigger) => {
    if (closed) return;
    try {
      await readUntilCaughtUp(trigger);
      if (failing) logger.info({ position }, 'reading the notification log again');
      failing = false;
      // Only delivery waits on what is committed but not settled: with nobody listening, no hurry.
      if (!closed) shortfall.check(position, listeners.size > 0);
    } catch (error) {
      metrics.logReads.inc({ trigger, outcome: 'error' });
      // Once per outage, not once a second: the timer keeps retrying from the same position.
      if (!failing) logger.warn({ err: error, position }, 'could not read the notification log; retrying');
      failing = true;
    }
  });

  return {
    get position() {
      return position;
    },
    follow(listener: FeedListener): FeedFollowing {
      listeners.add(listener);
      return { position, stop: () => listeners.remove(listener) };
    },
    /** Asks for a read; a wake while one runs causes one more read after it, however many arrive. */
    wake(trigger: ReadTrigger) {
      if (!closed) reads.request(trigger);
    },
    /**
     * A replica committed a notification at `committed`, the log being settled through `settled`
     * (either unknown from a replica of an earlier release). With listeners, read unless that
     * commit was handed out already (a replica hears its own messages back); reads that stop short
     * of it are retried soon. With nobody listening, move to `settled` without reading.
     */
    heard(committed: LogPosition | undefined, settled: LogPosition | undefined) {
      if (closed) return;
      if (committed) shortfall.expect(committed);
      if (listeners.size > 0) {
        if (!committed || comparePositions(committed, position) > 0) reads.request('wake');
      } else if (!settled) {
        reads.request('wake');
      } else if (comparePositions(settled, position) > 0) {
        moveTo(settled);
      }
    },
    async close() {
      closed = true;
      shortfall.stop();
      await reads.settled();
      listeners.clear();
    },
  };
}
