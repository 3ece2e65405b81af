// The confirmed feed: this replica's follower of the log of confirmations (the store's
// ConfirmationLog). Each notification is in that log once, when it became CONFIRMED, in the order
// the confirmations committed, so the feed hands out what the bank (an import, or an operator) has
// confirmed, in that order, once. A notification still waiting for the bank is simply not in the log
// yet: it holds back nothing else.
import type { ConfirmedNotificationRecord } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { CollectionStore } from '../store/types.ts';
import { createAnnouncer } from './feed-announcer.ts';
import { createLogReader, type LogFollower } from './log-reader.ts';
import { DEFAULT_ANNOUNCE_INTERVAL_MS, DEFAULT_POLL_INTERVAL_MS } from './notification-feed.ts';

/** The confirmed feed: what `incomingTransfer(confirmed: true)` follows. */
export interface ConfirmedFeed extends LogFollower<ConfirmedNotificationRecord> {
  /** Confirmations were recorded on this replica (the bank's answers, an import, a decision by hand): read at once here, and wake every replica through pub/sub. */
  decided(): void;
  close(): Promise<void>;
}

export interface ConfirmedFeedDeps {
  store: Pick<CollectionStore, 'confirmationLog'>;
  pubsub: PubSub;
  logger: Logger;
}

/**
 * Starts the confirmed feed at the newest settled confirmation. It reads when confirmations are
 * recorded (here, or on another replica: `notificationsConfirmed`), when the pub/sub link was
 * interrupted, and on a timer, since pub/sub may lose messages. What it hands out is always read from
 * its own store. With nobody following, it moves to the settled head without reading a notification.
 */
export async function startConfirmedFeed(deps: ConfirmedFeedDeps): Promise<ConfirmedFeed> {
  const { store, pubsub, logger } = deps;
  const log = store.confirmationLog;
  const reader = createLogReader<ConfirmedNotificationRecord>(
    {
      listAfter: (after, limit) => log.listAfter({ after, limit }),
      settledHead: () => log.settledHead(),
      committedHead: () => log.committedHead(),
      positionOf: (notification) => notification.confirmedAt,
    },
    await log.settledHead(),
    logger,
    { what: 'confirmation', pollIntervalMs: DEFAULT_POLL_INTERVAL_MS },
  );
  const announcer = createAnnouncer({ pubsub, logger }, DEFAULT_ANNOUNCE_INTERVAL_MS, 'notificationsConfirmed');
  const unsubscribe = await pubsub.subscribe('notificationsConfirmed', (message) => {
    if (message.replica !== announcer.replica) reader.request('wake');
  });
  const stopWatching = pubsub.onInterruption(() => reader.request('wake'));
  const timer = setInterval(() => reader.request('timer'), DEFAULT_POLL_INTERVAL_MS);
  timer.unref();

  let closing: Promise<void> | undefined;
  return {
    get position() {
      return reader.position;
    },
    follow: (listener) => reader.follow(listener),
    decided() {
      if (closing) return;
      reader.request('wake');
      announcer.announce();
    },
    close: () =>
      (closing ??= (async () => {
        clearInterval(timer);
        stopWatching();
        await announcer.flush();
        await unsubscribe().catch((error: unknown) => logger.debug({ err: error }, 'confirmed feed unsubscribe failed'));
        await reader.close();
      })()),
  };
}
