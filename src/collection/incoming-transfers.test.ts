import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { withMethod } from '../../test/helpers/proxy.ts';
import { newNotification } from '../../test/helpers/notifications.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { withinDeadline } from '../async/deadline.ts';
import { START_OF_LOG, type CollectionNotificationRecord } from '../domain/index.ts';
import { createLogger } from '../logger.ts';
import { createMetrics } from '../metrics.ts';
import { createPubSub } from '../pubsub/index.ts';
import { createNotificationStore } from '../store/index.ts';
import type { CollectionStore } from '../store/types.ts';
import { streamIncomingTransfers } from './incoming-transfers.ts';
import { startNotificationFeed, type NotificationFeed } from './notification-feed.ts';
import { SUBSCRIBER_WAITING_LIMIT } from './subscriber-queue.ts';

const logger = createLogger('silent');
const ACCOUNT = '0123456789';

/**
 * A real store, memory pub/sub and log (closed after the test). `beforeRead` runs before each
 * account-filtered `listAfter`: only a replay filters, so the log's own reads are never held.
 * The stream's log lines (info and up) are kept in `lines`.
 */
async function setUp(options: { beforeRead?: () => Promise<void> } = {}) {
  const raw: CollectionStore = await createNotificationStore('sqlite::memory:', { logger });
  onCleanup(() => raw.close());
  const store = withMethod(raw, 'listAfter', async (query) => {
    if (query.accountNumber !== undefined) await options.beforeRead?.();
    return raw.listAfter(query);
  });
  const memory = await createPubSub('memory:', { logger, channelPrefix: 'test:' });
  onCleanup(() => memory.close());
  let interrupt = () => {};
  // The pub/sub's interruption under the test's control.
  const pubsub = withMethod(memory, 'onInterruption', (listener) => ((interrupt = listener), () => undefined));
  const metrics = createMetrics();
  const notificationFeed = await startNotificationFeed({ store, pubsub, metrics, logger });
  /** Wakes the feed as another replica's message does: it reads whatever is new. */
  const nudge = () => memory.publish('notificationsStored', { replica: 'another replica' });
  onCleanup(() => notificationFeed.close());
  const lines: { level: number; msg: string; waiting?: number; ending?: string }[] = [];
  const streamLogger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const deps = { store, notificationFeed, metrics, logger: streamLogger };
  /** Stores one notification and announces it, as the webhook does. */
  const deliver = async () => {
    const result = await raw.insert(newNotification({ accountNumber: ACCOUNT }));
    if (result.status !== 'inserted') throw new Error('not inserted');
    notificationFeed.announce(result.notification.position, result.settled);
    return result.notification;
  };
  const gauge = async (name: 'notificationsWaiting' | 'subscriptionsEndedEarly' | 'activeSubscriptions') =>
    (await metrics[name].get()).values[0]?.value ?? 0;
  const live = () => gauge('activeSubscriptions');
  /** Resolves once a subscriber is live (nothing announces it but the gauge). */
  const untilLive = () => waitFor(async () => ((await live()) > 0 ? true : undefined));
  /** Stores `count` notifications and resolves once the log has handed them out and the turn is over. */
  const deliverAll = async (count: number) => {
    let last = 0;
    for (let i = 0; i < count; i += 1) last = (await deliver()).position.seq;
    await feedReached(notificationFeed, last);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { deps, deliver, deliverAll, nudge, interrupt: () => interrupt(), live, untilLive, notificationFeed, gauge, lines };
}

/** Resolves once the log has handed out `seq` (on SQLite a position is (0, seq)). */
function feedReached(log: NotificationFeed, seq: number) {
  return waitFor(() => (log.position.seq >= seq ? true : undefined));
}

/** The position of `seq` on SQLite. */
const at = (seq: number | undefined) => ({ txid: 0, seq: seq! });

/** Pulls `count` notifications (fewer when the stream ends, or after 5 s without one); their seqs. */
async function take(stream: AsyncIterator<CollectionNotificationRecord>, count: number): Promise<number[]> {
  const seqs: number[] = [];
  while (seqs.length < count) {
    const next = await withinDeadline(stream.next(), 5_000, 'quiet' as const);
    if (next === 'quiet' || next.done) break;
    seqs.push(next.value.position.seq);
  }
  return seqs;
}

describe('streamIncomingTransfers', () => {
  it('counts a subscriber as active only once it is live, and not after it ends', async () => {
    const { deps, deliver, live, untilLive } = await setUp();
    const stream = streamIncomingTransfers(deps, {});
    expect(await live()).toBe(0);
    const first = stream.next();
    // The executor starts on the first pull; a delivery after the gauge rises is never missed.
    await untilLive();
    const delivered = await deliver();
    expect((await first).value).toEqual(delivered);
    await stream.return?.();
    expect(await live()).toBe(0);
  });

  it('stays open when pub/sub is interrupted, and delivers what is stored meanwhile', async () => {
    const { deps, deliver, interrupt, untilLive } = await setUp();
    const stream = streamIncomingTransfers(deps, {});
    const first = stream.next();
    await untilLive();
    const before = await deliver();
    expect((await first).value?.position).toEqual(before.position);
    interrupt();
    const after = await deliver();
    expect(await take(stream, 1)).toEqual([after.position.seq]);
    await stream.return?.();
  });

  it(`keeps ${SUBSCRIBER_WAITING_LIMIT} notifications waiting for a subscriber that stopped taking them, and completes it at one more`, async () => {
    const { deps, deliver, deliverAll, untilLive, gauge, lines } = await setUp();
    const stream = streamIncomingTransfers(deps, {});
    const first = stream.next();
    await untilLive();
    await deliver();
    await first;

    await deliverAll(SUBSCRIBER_WAITING_LIMIT);
    expect(await gauge('notificationsWaiting')).toBe(SUBSCRIBER_WAITING_LIMIT);
    expect(await gauge('subscriptionsEndedEarly')).toBe(0);
    expect(await gauge('activeSubscriptions')).toBe(1);

    await deliverAll(1);
    // Ended at once: what waited is dropped (the client resumes from its last cursor), nothing is held.
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(await gauge('notificationsWaiting')).toBe(0);
    expect(await gauge('subscriptionsEndedEarly')).toBe(1);
    expect(await gauge('activeSubscriptions')).toBe(0);
    expect(lines.filter((line) => line.level >= 40)).toEqual([
      expect.objectContaining({
        level: 40,
        waiting: SUBSCRIBER_WAITING_LIMIT + 1,
        ending: 'completed',
        msg: expect.stringContaining('ended early'),
      }),
    ]);
  });

  it('reads a replay one page at a time as it is taken, and counts what arrives live behind it against the same limit', async () => {
    let replayReads = 0;
    const { deps, deliverAll, gauge } = await setUp({ beforeRead: async () => void (replayReads += 1) });
    await deliverAll(1_000);
    const stream = streamIncomingTransfers(deps, { accountNumber: ACCOUNT, after: START_OF_LOG });
    expect((await stream.next()).value?.position.seq).toBe(1);
    // One page read; what the subscriber has not taken of it waits.
    expect(replayReads).toBe(1);
    const page = (await gauge('notificationsWaiting')) + 1;
    expect(page).toBeGreaterThan(1);
    expect(page).toBeLessThan(1_000);

    await deliverAll(SUBSCRIBER_WAITING_LIMIT - (page - 1));
    expect(await gauge('notificationsWaiting')).toBe(SUBSCRIBER_WAITING_LIMIT);
    expect(await gauge('subscriptionsEndedEarly')).toBe(0);
    await deliverAll(1);
    expect(await gauge('subscriptionsEndedEarly')).toBe(1);
    expect(await gauge('notificationsWaiting')).toBe(0);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    // The store was never read again for a subscriber that took nothing more.
    expect(replayReads).toBe(1);
  });

  it('replays a page per turn of the event loop, so other work goes on while a subscriber that keeps up replays', async () => {
    let replayReads = 0;
    const { deps, deliverAll } = await setUp({ beforeRead: async () => void (replayReads += 1) });
    await deliverAll(500);
    // Counts turns of the event loop until stopped: what a webhook delivery or another socket needs.
    let turns = 0;
    let counting = true;
    const countTurns = () => counting && ((turns += 1), setImmediate(countTurns));
    setImmediate(countTurns);
    const stream = streamIncomingTransfers(deps, { accountNumber: ACCOUNT, after: START_OF_LOG });
    expect(await take(stream, 500)).toHaveLength(500);
    counting = false;
    await stream.return?.();
    expect(replayReads).toBeGreaterThanOrEqual(10);
    // Without a yield per page, the whole replay (a SQLite read settles at once) runs within one turn.
    expect(turns).toBeGreaterThanOrEqual(replayReads - 1);
  });

  it('takes a burst larger than the limit, handed out in one turn, when the subscriber keeps up', async () => {
    const { deps, deliver, nudge, untilLive, gauge } = await setUp();
    const stream = streamIncomingTransfers(deps, {});
    const taking = take(stream, SUBSCRIBER_WAITING_LIMIT + 500);
    await untilLive();
    // Stored without a word to the log: its next read hands them all out at once.
    const stored = [];
    for (let i = 0; i < SUBSCRIBER_WAITING_LIMIT + 500; i += 1) {
      const result = await deps.store.insert(newNotification({ accountNumber: ACCOUNT }));
      if (result.status === 'inserted') stored.push(result.notification.position.seq);
    }
    await nudge();
    expect(await taking).toEqual(stored);
    expect(await gauge('subscriptionsEndedEarly')).toBe(0);
    await deliver();
    await stream.return?.();
  });

  it('replays up to where the log stood, then hands on what the log buffered meanwhile, once each', async () => {
    // The replay's query is held; deliveries land meanwhile. They are stored (so the replay's query
    // reads them) and handed out by the log (so the subscriber buffers them): the replay must stop
    // at the log's position, and the buffer must come after the replay.
    const holdReplay = Promise.withResolvers<void>();
    const replayWaiting = Promise.withResolvers<void>();
    const { deps, deliver, notificationFeed } = await setUp({
      beforeRead: async () => {
        replayWaiting.resolve();
        await holdReplay.promise;
      },
    });
    const stored = [await deliver(), await deliver(), await deliver()].map((n) => n.position.seq);
    await feedReached(notificationFeed, stored[2]!);
    const stream = streamIncomingTransfers(deps, { accountNumber: ACCOUNT, after: at(stored[0]) });
    const taking = take(stream, 3);
    await replayWaiting.promise;
    const during = (await deliver()).position.seq;
    await feedReached(notificationFeed, during);
    holdReplay.resolve();
    expect(await taking).toEqual([stored[1], stored[2], during]);
    const later = (await deliver()).position.seq;
    expect(await take(stream, 1)).toEqual([later]);
    await stream.return?.();
  });

  it('skips what the log hands out up to a cursor that is ahead of it', async () => {
    const { deps, deliver, notificationFeed } = await setUp();
    await notificationFeed.close(); // a feed that has fallen behind the store
    const quiet = await createPubSub('memory:', { logger, channelPrefix: 'test:' });
    onCleanup(() => quiet.close());
    const lagging = await startNotificationFeed({ ...deps, pubsub: quiet });
    onCleanup(() => lagging.close());
    const seen = [await deliver(), await deliver()].map((n) => n.position.seq);
    const stream = streamIncomingTransfers({ ...deps, notificationFeed: lagging }, { after: at(seen[1]) });
    const taking = take(stream, 1);
    const next = (await deliver()).position.seq;
    // `deliver` announced it on the closed feed: a wake on its own pub/sub (or its timer) reaches this one.
    await quiet.publish('notificationsStored', { replica: 'another replica' });
    expect(await taking).toEqual([next]);
    await stream.return?.();
  });
});
