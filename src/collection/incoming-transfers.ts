import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  comparePositions,
  START_OF_LOG,
  type CollectionNotificationRecord,
  type ConfirmedNotificationRecord,
  type LogPosition,
} from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { CollectionStore } from '../store/types.ts';
import type { FeedFollowing, LogFollower } from './log-reader.ts';
import { reportTooFarBehind, SubscriberQueue, type SubscriberConnection } from './subscriber-queue.ts';

/**
 * How many stored notifications a resumed subscription reads per store query. A page is read once
 * the previous one has been taken, so it is also what a stalled replay holds (docs/benchmarks.md, "What shapes the code").
 */
const REPLAY_PAGE_SIZE = 50;

export interface IncomingTransferDeps {
  /** What the stream follows: every stored notification. */
  notificationFeed: LogFollower<CollectionNotificationRecord>;
  /** What `confirmed` follows: the log of confirmations. */
  confirmedFeed?: LogFollower<ConfirmedNotificationRecord> | undefined;
  store: Pick<CollectionStore, 'listAfter' | 'confirmationLog'>;
  metrics: Metrics;
  logger: Logger;
}

type Notification = CollectionNotificationRecord;

/** One of the two logs a stream follows: its feed, its replay, and where an entry stands in it. */
interface FollowedLog<Entry extends Notification> {
  feed: LogFollower<Entry>;
  readPage(range: ReplayRange, from: LogPosition): Promise<Entry[]>;
  positionOf(entry: Entry): LogPosition;
}

export interface IncomingTransferOptions {
  accountNumber?: string | undefined;
  /** Only the notifications of these accounts (none when empty), beside `accountNumber`; every account when undefined. */
  accounts?: readonly string[] | undefined;
  /** Where the client resumes (its last cursor's position, in the log it follows); live only when undefined. */
  after?: LogPosition | undefined;
  /**
   * The log of confirmations: each notification once it is CONFIRMED, in the order confirmations
   * were recorded, positioned in that log (`confirmedAt`). Needs `confirmedFeed`.
   */
  confirmed?: boolean | undefined;
  /** The subscriber's own connection, closed when it falls too far behind; without one it completes. */
  connection?: SubscriberConnection | undefined;
}

/**
 * The `incomingTransfer` stream: with `after` (a log position), every entry of its log after it in
 * log order, then live ones; without, live only. The log is the store's (every stored notification),
 * or with `confirmed` the log of confirmations. No gap and no duplicate at the seam:
 * 1. follow this replica's log first, which names its position P and hands out only positions > P;
 * 2. replay from the store the notifications in (after, P], a page at a time as the subscriber
 *    takes them, while what the log hands out meanwhile waits behind the replay;
 * 3. then hand on what waited, and go on live.
 * A subscriber with more than SUBSCRIBER_WAITING_LIMIT notifications waiting is ended: its connection
 * closed (1013 over WebSocket), or the subscription completed; either way the client resumes from its
 * last cursor.
 */
export function streamIncomingTransfers(deps: IncomingTransferDeps, options: IncomingTransferOptions): AsyncIterableIterator<Notification> {
  if (options.confirmed !== true) {
    return streamLog(deps, options, {
      feed: deps.notificationFeed,
      readPage: (range, from) => deps.store.listAfter({ ...range, after: from, limit: REPLAY_PAGE_SIZE }),
      positionOf: (notification) => notification.position,
    });
  }
  const { confirmedFeed } = deps;
  if (confirmedFeed === undefined) throw new Error('the confirmed stream needs a confirmed feed (confirmation is off)');
  return streamLog(deps, options, {
    feed: confirmedFeed,
    readPage: (range, from) => deps.store.confirmationLog.listAfter({ ...range, after: from, limit: REPLAY_PAGE_SIZE }),
    positionOf: (notification) => notification.confirmedAt,
  });
}

function streamLog<Entry extends Notification>(
  deps: IncomingTransferDeps,
  options: IncomingTransferOptions,
  log: FollowedLog<Entry>,
): AsyncIterableIterator<Entry> {
  const { accountNumber, accounts, after, connection } = options;
  const { feed, positionOf } = log;
  // A cursor may be ahead of this replica's log (read on another replica, or by a query): what the
  // log hands out up to it was seen already.
  const seen = after ?? START_OF_LOG;
  const visible = accounts === undefined ? undefined : new Set(accounts);
  const wanted = (n: Entry) =>
    comparePositions(positionOf(n), seen) > 0 &&
    (accountNumber === undefined || n.accountNumber === accountNumber) &&
    (visible === undefined || visible.has(n.accountNumber));
  let following: FeedFollowing | undefined;
  let unlisten: (() => void) | undefined;

  return new SubscriberQueue<Entry>({
    gauge: deps.metrics.notificationsWaiting,
    start(queue) {
      following = feed.follow((n) => {
        if (wanted(n)) queue.push(n);
      });
      unlisten = connection?.onClosedBehind(() => void queue.return());
      // Counted once live, so the gauge also tells when a new subscriber can no longer miss an event.
      deps.metrics.activeSubscriptions.inc();
      if (after === undefined) return undefined;
      return replayPages(log, { accountNumber, accounts, through: following.position }, after);
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

/** What a replay reads, after a position: up to `through`, of these accounts. */
interface ReplayRange {
  accountNumber: string | undefined;
  accounts: readonly string[] | undefined;
  through: LogPosition;
}

/**
 * Reads (after, through] of the log from the store, oldest first, a page per step. Entries past
 * `through` are left to the feed, which hands them out behind the replay.
 */
async function* replayPages<Entry extends Notification>(
  log: FollowedLog<Entry>,
  range: ReplayRange,
  after: LogPosition,
): AsyncGenerator<Entry[], void> {
  for (let from = after; comparePositions(from, range.through) < 0;) {
    // A page per turn of the event loop: a subscriber that keeps up would otherwise be replayed in one
    // run of promise callbacks (a SQLite read settles at once), holding every socket and the webhook
    // waiting for as long as its whole history takes.
    await nextTurn();
    const rows = await log.readPage(range, from);
    const last = rows.at(-1);
    if (last === undefined) return;
    // Nothing of the page is kept here past the yield: a stalled subscriber holds only what it has not taken.
    yield rows;
    if (rows.length < REPLAY_PAGE_SIZE) return;
    from = log.positionOf(last);
  }
}
