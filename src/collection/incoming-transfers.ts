import { FixedBuffer, Repeater } from '@repeaterjs/repeater';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';
import type { CollectionNotificationRecord } from './types.ts';

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
): AsyncIterableIterator<CollectionNotificationRecord> {
  const { accountNumber, afterSeq } = options;
  const wanted = (n: CollectionNotificationRecord) => accountNumber === undefined || n.accountNumber === accountNumber;

  return new Repeater<CollectionNotificationRecord>(async (push, stop) => {
    let watermark = afterSeq ?? -1;
    let buffered: CollectionNotificationRecord[] | undefined = afterSeq === undefined ? undefined : [];

    const deliverLive = (notification: CollectionNotificationRecord) => {
      if (notification.seq <= watermark) return;
      try {
        void push(notification);
        deps.metrics.deliveredEvents.inc({ source: 'live' });
      } catch {
        // The subscriber stopped reading: end it rather than drop money events silently.
        end('the subscriber fell too far behind');
      }
    };
    // Ending completes the subscription; the client resumes with `after` and misses nothing. (A
    // thrown error would make graphql-ws close the client's whole socket, other operations too.)
    const end = (reason: string) => {
      deps.logger.warn({ reason }, 'incomingTransfer subscription ended early; the client should resume with after');
      deps.metrics.subscriptionsEndedEarly.inc();
      stop();
    };

    const stopListening = deps.pubsub.onInterruption(() => end('live delivery was interrupted'));
    let unsubscribe: (() => Promise<void>) | undefined;
    try {
      unsubscribe = await deps.pubsub.subscribe('incomingTransfer', (notification) => {
        if (!wanted(notification)) return;
        if (buffered) buffered.push(notification);
        else deliverLive(notification);
      });
      // Counted once live, so the gauge also tells when a new subscriber can no longer miss a delivery.
      deps.metrics.activeSubscriptions.inc();

      if (afterSeq !== undefined) {
        for (;;) {
          const page = await deps.store.listAfter({ accountNumber, afterSeq: watermark, limit: REPLAY_PAGE_SIZE });
          for (const notification of page) {
            await push(notification);
            watermark = notification.seq;
            deps.metrics.deliveredEvents.inc({ source: 'replay' });
          }
          if (page.length < REPLAY_PAGE_SIZE) break;
        }
        const pending = buffered ?? [];
        buffered = undefined;
        pending.forEach(deliverLive);
      }
      await stop;
    } finally {
      stopListening();
      if (unsubscribe) deps.metrics.activeSubscriptions.dec();
      await unsubscribe?.().catch((error: unknown) => deps.logger.debug({ err: error }, 'unsubscribe after close failed'));
    }
  }, new FixedBuffer(SUBSCRIBER_BUFFER));
}
