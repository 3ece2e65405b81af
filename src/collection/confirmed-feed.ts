// The confirmed feed: this replica's second follower of the store's log, behind the notification
// feed. Its position is the decided frontier: every notification at or before it is settled and
// decided (CONFIRMED, MISMATCHED, NOT_AT_BANK or UNCHECKED), so it hands out the CONFIRMED ones in
// log order, once, passes the others, and stops at the first one still PENDING.
import { comparePositions, type LogPosition } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import { Listeners } from '../pubsub/listeners.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { CollectionStore } from '../store/types.ts';
import { createAnnouncer } from './feed-announcer.ts';
import {
  DEFAULT_ANNOUNCE_INTERVAL_MS,
  DEFAULT_POLL_INTERVAL_MS,
  type FeedFollowing,
  type FeedListener,
  type LogFollower,
  type NotificationFeed,
} from './notification-feed.ts';

/** Notifications per read of the decided part of the log. */
const PAGE_SIZE = 500;

/** The confirmed feed: what `incomingTransfer(confirmed: true)` follows. */
export interface ConfirmedFeed extends LogFollower {
  /** This replica recorded outcomes: read at once here, and wake every replica through pub/sub. */
  decided(): void;
  close(): Promise<void>;
}

export interface ConfirmedFeedDeps {
  store: Pick<CollectionStore, 'listAfter' | 'confirmations'>;
  pubsub: PubSub;
  /** Its commits wake this feed, where nothing PENDING holds it. */
  notificationFeed: Pick<NotificationFeed, 'onAdvance'>;
  logger: Logger;
}

/**
 * Starts the confirmed feed at the store's decided head. It reads again when an outcome is recorded
 * (here, or on another replica: `notificationsConfirmed`), when the notification feed moves on while
 * nothing PENDING holds this one (a notification stored already decided), when the pub/sub link was
 * interrupted, and on a timer, since pub/sub may lose messages. What it hands out is always read from
 * its own store. With nobody following, it moves to the decided head without reading a notification.
 */
export async function startConfirmedFeed(deps: ConfirmedFeedDeps): Promise<ConfirmedFeed> {
  const { store, pubsub, logger } = deps;
  const listeners = new Listeners<Parameters<FeedListener>[0]>(logger, 'confirmed feed');
  let position = await store.confirmations.decidedHead();
  // Whether a PENDING notification held the last read short of the settled head: a commit then changes nothing.
  let held = false;
  let failing = false;
  let state: 'idle' | 'reading' | 'again' | 'closed' = 'idle';
  let reading: Promise<void> = Promise.resolve();

  const isClosed = () => state === 'closed';
  const moveTo = (next: LogPosition) => {
    if (comparePositions(next, position) > 0) position = next;
  };

  async function readOnce(): Promise<void> {
    const { through, pendingAt } = await store.confirmations.decision();
    held = pendingAt !== undefined;
    if (listeners.size === 0) return moveTo(through);
    while (comparePositions(through, position) > 0) {
      const page = await store.listAfter({ after: position, through, limit: PAGE_SIZE });
      for (const notification of page) {
        if (comparePositions(notification.position, position) <= 0) continue;
        moveTo(notification.position);
        if (notification.confirmation.status === 'CONFIRMED') listeners.handOut(notification);
      }
      if (isClosed()) return;
      if (page.length < PAGE_SIZE) break;
    }
    // Every notification up to `through` has been read: none of them is left to hand out.
    moveTo(through);
  }

  async function run(): Promise<void> {
    for (let again = true; again;) {
      try {
        await readOnce();
        if (failing) logger.info({ position }, 'reading the decided notification log again');
        failing = false;
      } catch (error) {
        if (!failing) logger.warn({ err: error, position }, 'could not read how far the notification log is confirmed; retrying');
        failing = true;
      }
      again = afterRead();
    }
  }

  /** Whether another read was asked for meanwhile; otherwise the reader goes idle (unless closed). */
  function afterRead(): boolean {
    if (state === 'again') {
      state = 'reading';
      return true;
    }
    if (state === 'reading') state = 'idle';
    return false;
  }

  /** A read now, or one more after the read in progress. */
  function request(): void {
    if (state === 'idle') {
      state = 'reading';
      reading = run();
    } else if (state === 'reading') state = 'again';
  }

  const announcer = createAnnouncer({ pubsub, logger }, DEFAULT_ANNOUNCE_INTERVAL_MS, 'notificationsConfirmed');
  const unsubscribe = await pubsub.subscribe('notificationsConfirmed', (message) => {
    if (message.replica !== announcer.replica) request();
  });
  const stopWatching = pubsub.onInterruption(request);
  const stopFollowing = deps.notificationFeed.onAdvance(() => {
    if (!held) request();
  });
  const timer = setInterval(request, DEFAULT_POLL_INTERVAL_MS);
  timer.unref();

  let closing: Promise<void> | undefined;
  return {
    get position() {
      return position;
    },
    follow(listener): FeedFollowing {
      return { position, stop: listeners.add(listener) };
    },
    decided() {
      if (closing) return;
      request();
      announcer.announce();
    },
    close: () =>
      (closing ??= (async () => {
        clearInterval(timer);
        stopWatching();
        stopFollowing();
        await announcer.flush();
        await unsubscribe().catch((error: unknown) => logger.debug({ err: error }, 'confirmed feed unsubscribe failed'));
        state = 'closed';
        await reading;
        listeners.clear();
      })()),
  };
}
