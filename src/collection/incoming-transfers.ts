import { FixedBuffer, Repeater, type Push, type Stop } from '@repeaterjs/repeater';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';
import type { CollectionNotificationRecord } from '../domain/index.ts';

/** How many stored notifications a resumed subscription reads per store query. */
const REPLAY_PAGE_SIZE = 200;
/** Notifications a slow subscriber may fall behind by before it is ended (it can resume with `after`). */
const SUBSCRIBER_BUFFER = 1000;

export interface IncomingTransferDeps {
  store: NotificationStore;
  pubsub: PubSub;
  metrics: Metrics;
  logger: Logger;
}

type Notification = CollectionNotificationRecord;

/** One subscriber's stream: how far it has been served, and how to push to it or end it. */
interface Subscriber {
  deps: IncomingTransferDeps;
  push: Push<Notification>;
  stop: Stop;
  /** Only this account's notifications, when given. */
  accountNumber: string | undefined;
  /** The highest seq the replay delivered; a live notification at or below it was already sent. */
  watermark: number;
  /** Live notifications held while the replay runs; undefined once live. */
  buffered: Notification[] | undefined;
}

/**
 * The `incomingTransfer` stream: with `afterSeq`, every stored notification after it in order, then
 * live ones; without, live only. No gap and no duplicate at the seam:
 * 1. subscribe first, and wait until the subscription is live, buffering what arrives;
 * 2. replay from the store page by page, remembering the highest seq delivered (the watermark);
 * 3. then deliver the buffer and everything live, skipping seq ≤ watermark (already replayed).
 * This relies on the store's promise that seq increases in commit order: anything committed after
 * the last replay query has a higher seq than the watermark, and is published after its commit.
 * When live delivery cannot be trusted (the pub/sub lost messages, or the subscriber stopped
 * reading), the stream completes early so the client resumes from its last cursor.
 */
export function streamIncomingTransfers(
  deps: IncomingTransferDeps,
  options: { accountNumber?: string | undefined; afterSeq?: number | undefined },
): AsyncIterableIterator<Notification> {
  const { accountNumber, afterSeq } = options;
  return new Repeater<Notification>(async (push, stop) => {
    const replaying = afterSeq !== undefined;
    const subscriber: Subscriber = {
      deps,
      push,
      stop,
      accountNumber,
      watermark: afterSeq ?? -1,
      buffered: replaying ? [] : undefined,
    };
    const stopListening = deps.pubsub.onInterruption(() => endEarly(subscriber, 'live delivery was interrupted'));
    let unsubscribe: (() => Promise<void>) | undefined;
    try {
      unsubscribe = await subscribeAndBuffer(subscriber);
      // Counted once live, so the gauge also tells when a new subscriber can no longer miss a delivery.
      deps.metrics.activeSubscriptions.inc();
      if (replaying) {
        await replay(subscriber);
        goLive(subscriber);
      }
      await stop;
    } finally {
      stopListening();
      if (unsubscribe) deps.metrics.activeSubscriptions.dec();
      await unsubscribe?.().catch((error: unknown) => deps.logger.debug({ err: error }, 'unsubscribe after close failed'));
    }
  }, new FixedBuffer(SUBSCRIBER_BUFFER));
}

/** Step 1: listens for the wanted account's notifications, held while a replay runs; resolves once live. */
function subscribeAndBuffer(subscriber: Subscriber): Promise<() => Promise<void>> {
  const { accountNumber } = subscriber;
  return subscriber.deps.pubsub.subscribe('incomingTransfer', (notification) => {
    if (accountNumber !== undefined && notification.accountNumber !== accountNumber) return;
    if (subscriber.buffered) subscriber.buffered.push(notification);
    else deliverLive(subscriber, notification);
  });
}

/** Step 2: pushes every stored notification after the watermark, page by page, raising the watermark. */
async function replay(subscriber: Subscriber): Promise<void> {
  const { deps, accountNumber } = subscriber;
  for (;;) {
    const page = await deps.store.listAfter({ accountNumber, afterSeq: subscriber.watermark, limit: REPLAY_PAGE_SIZE });
    for (const notification of page) {
      await subscriber.push(notification);
      subscriber.watermark = notification.seq;
      deps.metrics.deliveredEvents.inc({ source: 'replay' });
    }
    if (page.length < REPLAY_PAGE_SIZE) return;
  }
}

/** Step 3: delivers what arrived during the replay; from now on live notifications go straight out. */
function goLive(subscriber: Subscriber): void {
  const pending = subscriber.buffered ?? [];
  subscriber.buffered = undefined;
  for (const notification of pending) deliverLive(subscriber, notification);
}

/** Pushes one live notification unless the replay already sent it; ends a subscriber that stopped reading. */
function deliverLive(subscriber: Subscriber, notification: Notification): void {
  if (notification.seq <= subscriber.watermark) return;
  try {
    void subscriber.push(notification);
    subscriber.deps.metrics.deliveredEvents.inc({ source: 'live' });
  } catch {
    // The subscriber stopped reading: end it rather than drop money events silently.
    endEarly(subscriber, 'the subscriber fell too far behind');
  }
}

/**
 * Completes the subscription; the client resumes with `after` and misses nothing. (A thrown error
 * would make graphql-ws close the client's whole socket, other operations too.)
 */
function endEarly(subscriber: Subscriber, reason: string): void {
  subscriber.deps.logger.warn({ reason }, 'incomingTransfer subscription ended early; the client should resume with after');
  subscriber.deps.metrics.subscriptionsEndedEarly.inc();
  subscriber.stop();
}
