import { FixedBuffer, Repeater } from '@repeaterjs/repeater';
import type { CollectionNotificationRecord } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { NotificationStore } from '../store/types.ts';
import type { NotificationLog } from './notification-log.ts';

/** How many stored notifications a resumed subscription reads per store query. */
const REPLAY_PAGE_SIZE = 200;
/** Notifications a slow subscriber may fall behind by before it is ended (it can resume with `after`). */
const SUBSCRIBER_BUFFER = 1000;

export interface IncomingTransferDeps {
  notificationLog: NotificationLog;
  store: NotificationStore;
  metrics: Metrics;
  logger: Logger;
}

type Notification = CollectionNotificationRecord;

/**
 * The `incomingTransfer` stream: with `afterSeq`, every stored notification after it in order, then
 * live ones; without, live only. No gap and no duplicate at the seam:
 * 1. follow this replica's log first, which names its position P and hands out only seq > P;
 * 2. replay from the store the notifications in (afterSeq, P], page by page, buffering what the log
 *    hands out meanwhile;
 * 3. then deliver the buffer and go live.
 * A subscriber that stops reading is ended (completed) so the client resumes from its last cursor.
 */
export function streamIncomingTransfers(
  deps: IncomingTransferDeps,
  options: { accountNumber?: string | undefined; afterSeq?: number | undefined },
): AsyncIterableIterator<Notification> {
  const { accountNumber, afterSeq } = options;
  const wanted = (n: Notification) => accountNumber === undefined || n.accountNumber === accountNumber;

  return new Repeater<Notification>(async (push, stop) => {
    let open = true;
    // Ending completes the subscription; the client resumes with `after` and misses nothing. (A
    // thrown error would make graphql-ws close the client's whole socket, other operations too.)
    const end = (reason: string) => {
      if (open) {
        deps.logger.warn({ reason }, 'incomingTransfer subscription ended early; the client should resume with after');
        deps.metrics.subscriptionsEndedEarly.inc();
      }
      open = false;
      stop();
    };
    void stop.then(() => (open = false));
    const delivery = createDelivery({ push, end, metrics: deps.metrics, afterSeq });
    const following = deps.notificationLog.follow((n) => {
      if (wanted(n)) delivery.live(n);
    });
    // Counted once live, so the gauge also tells when a new subscriber can no longer miss a delivery.
    deps.metrics.activeSubscriptions.inc();
    try {
      if (afterSeq !== undefined) {
        const range = { accountNumber, afterSeq, through: following.position };
        await replay(deps.store, range, { deliver: delivery.replayed, isOpen: () => open });
        delivery.goLive();
      }
      await stop;
    } finally {
      following.stop();
      deps.metrics.activeSubscriptions.dec();
    }
  }, new FixedBuffer(SUBSCRIBER_BUFFER));
}

interface DeliveryOptions {
  push: (value: Notification) => Promise<unknown>;
  end: (reason: string) => void;
  metrics: Metrics;
  /** Where the client resumes; live notifications are buffered until `goLive()` when given. */
  afterSeq: number | undefined;
}

/** Pushes to the subscriber in seq order, each at most once; holds live ones while a replay runs. */
function createDelivery({ push, end, metrics, afterSeq }: DeliveryOptions) {
  // Cheap guard: the highest seq pushed. A cursor may be ahead of this replica's log (read on
  // another replica, or by a query): what the log then hands out up to it was seen already.
  let delivered = afterSeq ?? 0;
  let buffer: Notification[] | undefined = afterSeq === undefined ? undefined : [];

  const pushLive = (notification: Notification) => {
    if (notification.seq <= delivered) return;
    delivered = notification.seq;
    try {
      void push(notification);
      metrics.deliveredEvents.inc({ source: 'live' });
    } catch {
      // Too many pending pushes: end it rather than drop money events silently.
      end('the subscriber fell too far behind');
    }
  };

  return {
    live(notification: Notification) {
      if (!buffer) return pushLive(notification);
      buffer.push(notification);
      if (buffer.length > SUBSCRIBER_BUFFER) end('the subscriber fell too far behind during its replay');
    },
    async replayed(notification: Notification) {
      if (notification.seq <= delivered) return;
      delivered = notification.seq;
      await push(notification);
      metrics.deliveredEvents.inc({ source: 'replay' });
    },
    /** Everything buffered has seq > the replay's end, so it follows on in order. */
    goLive() {
      const pending = buffer ?? [];
      buffer = undefined;
      pending.forEach(pushLive);
    },
  };
}

/**
 * Reads (afterSeq, through] from the store, oldest first, page by page. Rows past `through` are
 * left to the log, which hands them out to the subscriber's buffer.
 */
async function replay(
  store: NotificationStore,
  range: { accountNumber: string | undefined; afterSeq: number; through: number },
  subscriber: { deliver: (n: Notification) => Promise<void>; isOpen: () => boolean },
): Promise<void> {
  let from = range.afterSeq;
  while (from < range.through && subscriber.isOpen()) {
    const page = await store.listAfter({ accountNumber: range.accountNumber, afterSeq: from, limit: REPLAY_PAGE_SIZE });
    for (const notification of page) {
      if (notification.seq > range.through) return;
      await subscriber.deliver(notification);
      from = notification.seq;
    }
    if (page.length < REPLAY_PAGE_SIZE) return;
  }
}
