import { FixedBuffer, Repeater } from '@repeaterjs/repeater';
import { comparePositions, START_OF_LOG, type CollectionNotificationRecord, type LogPosition } from '../domain/index.ts';
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
 * The `incomingTransfer` stream: with `after` (a log position), every stored notification after it
 * in order, then live ones; without, live only. No gap and no duplicate at the seam:
 * 1. follow this replica's log first, which names its position P and hands out only positions > P;
 * 2. replay from the store the notifications in (after, P], page by page, buffering what the log
 *    hands out meanwhile;
 * 3. then deliver the buffer and go live.
 * A subscriber that stops reading is ended (completed) so the client resumes from its last cursor.
 */
export function streamIncomingTransfers(
  deps: IncomingTransferDeps,
  options: { accountNumber?: string | undefined; after?: LogPosition | undefined },
): AsyncIterableIterator<Notification> {
  const { accountNumber, after } = options;
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
    const delivery = createDelivery({ push, end, metrics: deps.metrics, after });
    const following = deps.notificationLog.follow((n) => {
      if (wanted(n)) delivery.live(n);
    });
    // Counted once live, so the gauge also tells when a new subscriber can no longer miss a delivery.
    deps.metrics.activeSubscriptions.inc();
    try {
      if (after !== undefined) {
        const range = { accountNumber, after, through: following.position };
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
  after: LogPosition | undefined;
}

/** Pushes to the subscriber in position order, each at most once; holds live ones while a replay runs. */
function createDelivery({ push, end, metrics, after }: DeliveryOptions) {
  // Cheap guard: the highest position pushed. A cursor may be ahead of this replica's log (read on
  // another replica, or by a query): what the log then hands out up to it was seen already.
  let delivered = after ?? START_OF_LOG;
  let buffer: Notification[] | undefined = after === undefined ? undefined : [];

  const pushLive = (notification: Notification) => {
    if (comparePositions(notification.position, delivered) <= 0) return;
    delivered = notification.position;
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
      if (comparePositions(notification.position, delivered) <= 0) return;
      delivered = notification.position;
      await push(notification);
      metrics.deliveredEvents.inc({ source: 'replay' });
    },
    /** Everything buffered lies after the replay's end, so it follows on in order. */
    goLive() {
      const pending = buffer ?? [];
      buffer = undefined;
      pending.forEach(pushLive);
    },
  };
}

/**
 * Reads (after, through] from the store, oldest first, page by page. Rows past `through` are
 * left to the log, which hands them out to the subscriber's buffer.
 */
async function replay(
  store: NotificationStore,
  range: { accountNumber: string | undefined; after: LogPosition; through: LogPosition },
  subscriber: { deliver: (n: Notification) => Promise<void>; isOpen: () => boolean },
): Promise<void> {
  let from = range.after;
  while (comparePositions(from, range.through) < 0 && subscriber.isOpen()) {
    const page = await store.listAfter({ accountNumber: range.accountNumber, after: from, limit: REPLAY_PAGE_SIZE });
    for (const notification of page) {
      if (comparePositions(notification.position, range.through) > 0) return;
      await subscriber.deliver(notification);
      from = notification.position;
    }
    if (page.length < REPLAY_PAGE_SIZE) return;
  }
}
