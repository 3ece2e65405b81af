import type { CollectionNotificationRecord, LogPosition } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';
import { createAnnouncer } from './feed-announcer.ts';
import { createLogReader, type LogFollower } from './log-reader.ts';

export type { FeedFollowing, LogFollower, ReadTrigger } from './log-reader.ts';

/** How often a replica reads the log unwoken: the most a lost pub/sub message delays live delivery. */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
/**
 * The least time between two `notificationsStored` messages of one replica while commits keep
 * coming: instead of one message per turn waking Redis and every replica (docs/benchmarks.md, "What shapes the code").
 */
export const DEFAULT_ANNOUNCE_INTERVAL_MS = 10;

export type FeedListener = (notification: CollectionNotificationRecord) => void;

/**
 * This replica's notification feed: its follower of the store's log of notifications (called a
 * feed in code, so that "log" there always means the logger). It reads the settled log by position
 * and hands each new notification to every local listener, in position order, once; one read serves
 * them all. What it hands out is always read from its own store: pub/sub messages only wake it.
 */
export interface NotificationFeed extends LogFollower<CollectionNotificationRecord> {
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
  const { store, metrics } = deps;
  const reader = createLogReader(
    {
      listAfter: (after, limit) => store.listAfter({ after, limit }),
      settledHead: () => store.settledHead(),
      committedHead: () => store.committedHead(),
      positionOf: (notification) => notification.position,
    },
    await store.settledHead(),
    deps.logger,
    {
      what: 'notification',
      pollIntervalMs: DEFAULT_POLL_INTERVAL_MS,
      // A settled position between two transactions' notifications (seq 0) names no notification.
      onPosition: (position) => void (position.seq > 0 && metrics.logPosition.set(position.seq)),
      onRead: (trigger, outcome) => metrics.logReads.inc({ trigger, outcome }),
    },
  );
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
