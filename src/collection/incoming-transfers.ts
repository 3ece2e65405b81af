import { setImmediate as nextTurn } from 'node:timers/promises';
import { comparePositions, START_OF_LOG, type CollectionNotificationRecord, type LogPosition } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { NotificationStore } from '../store/types.ts';
import type { FeedFollowing, LogFollower } from './notification-feed.ts';
import { reportTooFarBehind, SubscriberQueue, type SubscriberConnection } from './subscriber-queue.ts';

/**
 * How many stored notifications a resumed subscription reads per store query. A page is read once
 * the previous one has been taken, so it is also what a stalled replay holds (docs/benchmarks.md, "What shapes the code").
 */
const REPLAY_PAGE_SIZE = 50;

export interface IncomingTransferDeps {
  /** What the stream follows: every stored notification. */
  notificationFeed: LogFollower;
  /** What `confirmed` follows: the decided frontier, handing out CONFIRMED notifications only. */
  confirmedFeed?: LogFollower | undefined;
  store: NotificationStore;
  metrics: Metrics;
  logger: Logger;
}

type Notification = CollectionNotificationRecord;

export interface IncomingTransferOptions {
  accountNumber?: string | undefined;
  /** Only the notifications of these accounts (none when empty), beside `accountNumber`; every account when undefined. */
  accounts?: readonly string[] | undefined;
  /** Where the client resumes (its last cursor's position); live only when undefined. */
  after?: LogPosition | undefined;
  /**
   * Only CONFIRMED notifications, each once the log before it is decided: one still PENDING holds
   * back those after it. Needs `confirmedFeed`.
   */
  confirmed?: boolean | undefined;
  /** The subscriber's own connection, closed when it falls too far behind; without one it completes. */
  connection?: SubscriberConnection | undefined;
}

/**
 * The `incomingTransfer` stream: with `after` (a log position), every stored notification after it
 * in log order, then live ones; without, live only. No gap and no duplicate at the seam:
 * 1. follow this replica's log first, which names its position P and hands out only positions > P;
 * 2. replay from the store the notifications in (after, P], a page at a time as the subscriber
 *    takes them, while what the log hands out meanwhile waits behind the replay;
 * 3. then hand on what waited, and go on live.
 * A subscriber with more than SUBSCRIBER_WAITING_LIMIT notifications waiting is ended: its connection
 * closed (1013 over WebSocket), or the subscription completed; either way the client resumes from its
 * last cursor.
 */
export function streamIncomingTransfers(deps: IncomingTransferDeps, options: IncomingTransferOptions): AsyncIterableIterator<Notification> {
  const { accountNumber, accounts, after, connection, confirmed = false } = options;
  const feed = confirmed ? deps.confirmedFeed : deps.notificationFeed;
  if (feed === undefined) throw new Error('the confirmed stream needs a confirmed feed (confirmation is off)');
  // A cursor may be ahead of this replica's log (read on another replica, or by a query): what the
  // log hands out up to it was seen already.
  const seen = after ?? START_OF_LOG;
  const visible = accounts === undefined ? undefined : new Set(accounts);
  const wanted = (n: Notification) =>
    comparePositions(n.position, seen) > 0 &&
    (accountNumber === undefined || n.accountNumber === accountNumber) &&
    (visible === undefined || visible.has(n.accountNumber));
  let following: FeedFollowing | undefined;
  let unlisten: (() => void) | undefined;

  return new SubscriberQueue<Notification>({
    gauge: deps.metrics.notificationsWaiting,
    start(queue) {
      following = feed.follow((n) => {
        if (wanted(n)) queue.push(n);
      });
      unlisten = connection?.onClosedBehind(() => void queue.return());
      // Counted once live, so the gauge also tells when a new subscriber can no longer miss an event.
      deps.metrics.activeSubscriptions.inc();
      if (after === undefined) return undefined;
      return replayPages(deps.store, { accountNumber, accounts, after, through: following.position, confirmed });
    },
    onTaken: (_notification, source) => deps.metrics.subscriptionEvents.inc({ source }),
    onTooFarBehind(waiting) {
      // Ended, not failed: a thrown error would reach the client as an error (and the callback
      // plugin's log as one); a 1013 close, or a completion, asks it to resume with `after`.
      if (connection) connection.tooFarBehind(waiting);
      else reportTooFarBehind(deps, { waiting, ending: 'completed' });
    },
    onEnd() {
      unlisten?.();
      following?.stop();
      if (following) deps.metrics.activeSubscriptions.dec();
    },
  });
}

/** What a replay reads: (after, through], of these accounts, CONFIRMED ones only when `confirmed`. */
interface ReplayRange {
  accountNumber: string | undefined;
  accounts: readonly string[] | undefined;
  after: LogPosition;
  through: LogPosition;
  confirmed: boolean;
}

/**
 * Reads (after, through] from the store, oldest first, a page per step. Rows past `through` are
 * left to the log, which hands them out behind the replay. For the confirmed stream `through` is the
 * decided frontier: every notification up to it is decided, so its CONFIRMED ones are exactly what
 * the stream owes before going live.
 */
async function* replayPages(store: NotificationStore, range: ReplayRange): AsyncGenerator<Notification[], void> {
  for (let from = range.after; comparePositions(from, range.through) < 0;) {
    // A page per turn of the event loop: a subscriber that keeps up would otherwise be replayed in one
    // run of promise callbacks (a SQLite read settles at once), holding every socket and the webhook
    // waiting for as long as its whole history takes.
    await nextTurn();
    const { rows, last, full } = await readPage(store, range, from);
    if (last === undefined) return;
    // Nothing of the page is kept here past the yield: a stalled subscriber holds only what it has not taken.
    yield rows;
    if (!full) return;
    from = last;
  }
}

/** One page after `from`, through `through`: its rows, the last one's position, and whether more may follow. */
async function readPage(store: NotificationStore, range: ReplayRange, from: LogPosition) {
  const { accountNumber, accounts, through, confirmed } = range;
  const rows = await store.listAfter({ accountNumber, accounts, after: from, through, confirmed, limit: REPLAY_PAGE_SIZE });
  return { rows, last: rows.at(-1)?.position, full: rows.length === REPLAY_PAGE_SIZE };
}
