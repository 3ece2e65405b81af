import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { captureLogs } from '../../test/helpers/logs.ts';
import { withMethod } from '../../test/helpers/proxy.ts';
import { newNotification } from '../../test/helpers/notifications.ts';
import { silent, storeBackends, untilSettled } from '../../test/helpers/stores.ts';
import { expire, Inbox, nextTurn, waitFor } from '../../test/helpers/wait.ts';
import { comparePositions, START_OF_LOG, type CollectionNotificationRecord, type LogPosition } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import { createMetrics } from '../metrics.ts';
import { createPubSub } from '../pubsub/index.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';
import { startNotificationFeed } from './notification-feed.ts';

/** A pub/sub whose messages never arrive (Redis cut off): only the timer can wake the feed. */
const deafPubSub: PubSub = {
  kind: 'redis',
  publish: async () => {},
  subscribe: async () => async () => {},
  onInterruption: () => () => undefined,
  connected: false,
  close: async () => {},
};

/** The store with its `listAfter` wrapped, to count, hold or fail the feed's reads. */
function wrapListAfter(store: NotificationStore, wrap: (read: NotificationStore['listAfter']) => NotificationStore['listAfter']) {
  return withMethod(
    store,
    'listAfter',
    wrap((query) => store.listAfter(query)),
  );
}

/** Stores one new notification without telling anyone; its position, and the log's settled one. */
async function insertQuietly(store: NotificationStore): Promise<{ position: LogPosition; settled: LogPosition }> {
  const result = await store.insert(newNotification());
  if (result.status !== 'inserted') throw new Error('not inserted');
  return { position: result.notification.position, settled: result.settled };
}

/** Everything a listener was handed (an Inbox, to wait on), and their positions. */
function recorder() {
  const received = new Inbox<CollectionNotificationRecord>();
  return {
    received,
    listener: (n: CollectionNotificationRecord) => void received.push(n),
    positions: () => received.map((n) => n.position),
    /** Resolves once the notification at `position` has been handed out. */
    reached: (position: LogPosition) => received.first((n) => comparePositions(n.position, position) === 0),
  };
}

const positionOf = (result: Awaited<ReturnType<NotificationStore['insert']>>) =>
  result.status === 'inserted' ? result.notification.position : undefined;

describe.each(storeBackends)('the notification log on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;
  const testShared = backend.enabled && backend.shared ? it : it.skip;

  /**
   * A fresh database, a store on it, memory pub/sub unless given, and a log following it (closed
   * after). Its safety-net timer reads every second: checks count the reads of one trigger.
   */
  async function setUp(options: { pubsub?: PubSub; logger?: Logger; wrap?: Parameters<typeof wrapListAfter>[1] } = {}) {
    const database = await backend.create();
    const raw = await database.open();
    const store = options.wrap ? wrapListAfter(raw, options.wrap) : raw;
    const pubsub = options.pubsub ?? (await createPubSub('memory:', { logger: silent, channelPrefix: 'test:' }));
    onCleanup(() => pubsub.close());
    const metrics = createMetrics();
    const logger = options.logger ?? silent;
    const start = () => startNotificationFeed({ store, pubsub, metrics, logger });
    /**
     * Wakes the feed as another replica's message does: it names no position, so the feed must look.
     * Memory pub/sub hands the message over before `publish` resolves.
     */
    const nudge = () => pubsub.publish('notificationsStored', { replica: 'another replica' });
    /** Stores one notification as another replica would, and wakes the feed with its message. */
    const deliver = async (into: NotificationStore = raw) => {
      const result = await into.insert(newNotification());
      if (result.status !== 'inserted') throw new Error('not inserted');
      await nudge();
      return { ...result.notification, settled: result.settled };
    };
    /** Reads counted by the log's metric, of one trigger and/or outcome. */
    const reads = async (labels: { trigger?: string; outcome?: string }) => {
      const { values } = await metrics.logReads.get();
      const matching = values.filter(
        (v) => (!labels.trigger || v.labels.trigger === labels.trigger) && (!labels.outcome || v.labels.outcome === labels.outcome),
      );
      return matching.reduce((sum, v) => sum + v.value, 0);
    };
    const open = async () => {
      const log = await start();
      onCleanup(() => log.close());
      return log;
    };
    return { database, store: raw, pubsub, deliver, nudge, open, reads, metrics };
  }

  test('starts at the newest stored notification and hands out only what is stored after it', async () => {
    const { deliver, open, metrics, store } = await setUp();
    await deliver();
    const newest = await deliver();
    await untilSettled(store, [newest.position]);
    const log = await open();
    const { listener, positions, received } = recorder();
    expect(log.follow(listener).position).toEqual(newest.position);
    const later = [await deliver(), await deliver()];
    await received.atLeast(2);
    expect(positions()).toEqual(later.map((n) => n.position));
    expect((await metrics.logPosition.get()).values[0]?.value).toBe(later[1]!.position.seq);
  });

  test('hands each notification to every listener in position order, once, however often it is woken', async () => {
    const { deliver, nudge, pubsub, open } = await setUp();
    const log = await open();
    const [one, two] = [recorder(), recorder()];
    log.follow(one.listener);
    log.follow(two.listener);
    const sent: LogPosition[] = [];
    for (let i = 0; i < 20; i += 1) {
      const notification = await deliver();
      sent.push(notification.position);
      // Messages that say nothing new: each costs a read, never a notification handed out twice.
      await nudge();
      await pubsub.publish('notificationsStored', { replica: 'a stale or forged message' });
    }
    // Handed out after everything before it: a notification handed out twice would be there too.
    const last = (await deliver()).position;
    await Promise.all([one.reached(last), two.reached(last)]);
    expect(one.positions()).toEqual([...sent, last]);
    expect(two.positions()).toEqual([...sent, last]);
  });

  test('announces the commits of one event-loop turn as one wake-up that carries no position', async () => {
    const { store, open, reads } = await setUp();
    await open();
    const pubsub = await createPubSub('memory:', { logger: silent, channelPrefix: 'test:' });
    onCleanup(() => pubsub.close());
    const published = new Inbox<unknown>();
    const spy = withMethod(pubsub, 'publish', async (topic, payload) => void published.push({ topic, payload }));
    const other = await startNotificationFeed({ store, pubsub: spy, metrics: createMetrics(), logger: silent });
    onCleanup(() => other.close());
    const stored: { position: LogPosition; settled: LogPosition }[] = [];
    for (let i = 0; i < 5; i += 1) stored.push(await insertQuietly(store));
    for (const { position, settled } of [stored[4]!, ...stored.slice(0, 4)]) other.announce(position, settled);
    expect(published).toEqual([]); // not inside the turn that committed
    await published.atLeast(1);
    // Whatever that turn scheduled has run by the next one, and closing sends anything still pending.
    await nextTurn();
    await other.close();
    expect(published).toEqual([{ topic: 'notificationsStored', payload: { replica: expect.any(String) } }]);
    expect(await reads({ trigger: 'wake' })).toBe(0); // its own pub/sub never carried the spy's message
  });

  test('moves its position to the settled position of its own commit without reading while nobody listens', async () => {
    const { open, reads, store, deliver } = await setUp();
    const log = await open();
    const skipped = await insertQuietly(store);
    log.announce(skipped.position, skipped.settled);
    expect(log.position).toEqual(skipped.settled);
    expect(await reads({ trigger: 'wake' })).toBe(0);
    const { listener, positions, reached } = recorder();
    const { position } = log.follow(listener);
    expect(position).toEqual(skipped.settled);
    // It is owed exactly what lies after that position: on SQLite, a commit settles itself.
    const next = await deliver();
    await reached(next.position);
    expect(positions()).toEqual((await store.listAfter({ after: position, limit: 10 })).map((n) => n.position));
    if (store.kind === 'sqlite') expect(positions()).toEqual([next.position]);
  });

  test('reads nothing for its own message coming back, nor for a commit it has already handed out', async () => {
    const { deliver, open, reads, pubsub } = await setUp();
    const log = await open();
    const { listener, positions, reached } = recorder();
    log.follow(listener);
    const sent = await deliver();
    await reached(sent.position);
    const before = await reads({ trigger: 'wake' });
    // The webhook's own announcement of a commit already handed out: its message comes back next turn.
    const published = new Inbox<unknown>();
    const unsubscribe = await pubsub.subscribe('notificationsStored', (message) => void published.push(message));
    log.announce(sent.position, sent.settled);
    await published.atLeast(1);
    await nextTurn();
    await unsubscribe();
    expect(await reads({ trigger: 'wake' })).toBe(before);
    // Another replica's message still wakes it.
    const next = await deliver();
    await reached(next.position);
    expect(positions()).toEqual([sent.position, next.position]);
  });

  test('hands out only what its own store holds, whatever a message from elsewhere says', async () => {
    const { deliver, open, pubsub, store } = await setUp();
    const log = await open();
    const { listener, positions, reached } = recorder();
    log.follow(listener);
    const first = await deliver();
    await reached(first.position);
    // Another deployment's, a stale or a forged message: it can only cost a read.
    for (const replica of ['another deployment', 'x'.repeat(10_000), '']) await pubsub.publish('notificationsStored', { replica });
    await pubsub.publish('notificationsStored', { seq: Number.MAX_SAFE_INTEGER, txid: Number.MAX_SAFE_INTEGER } as never);
    expect(log.position).toEqual(first.position);
    const next = await deliver();
    await reached(next.position);
    expect(positions()).toEqual([first.position, next.position]);
    expect(positions()).toEqual((await store.listAfter({ after: START_OF_LOG, limit: 10 })).map((n) => n.position));
  });

  test('moves its position to the settled head with one look at the log when woken with nobody listening', async () => {
    let rowReads = 0;
    const { store, open, reads, nudge } = await setUp({ wrap: (read) => (query) => ((rowReads += 1), read(query)) });
    const log = await open();
    const { position } = await insertQuietly(store);
    await untilSettled(store, [position]);
    await nudge();
    // Nothing announces the move: the position is looked at until it has moved.
    await waitFor(() => (comparePositions(log.position, position) === 0 ? true : undefined));
    expect(await reads({ trigger: 'wake', outcome: 'ok' })).toBe(1);
    expect(rowReads).toBe(0);
  });

  test('answers an announcement it cannot publish with a log line, and the others read it on their timer', async () => {
    const { store, open, reads } = await setUp();
    const log = await open();
    const { listener, positions, received } = recorder();
    log.follow(listener);
    const failing: PubSub = { ...deafPubSub, publish: async () => Promise.reject(new Error('redis down')) };
    const { logger, logged, logs } = captureLogs('error');
    const replica = await startNotificationFeed({ store, pubsub: failing, metrics: createMetrics(), logger });
    onCleanup(() => replica.close());
    // Each lost message is a log line (never a rejection nobody handles), and the next is still sent.
    const stored = [];
    for (let i = 0; i < 2; i += 1) {
      const { position, settled } = await insertQuietly(store);
      const before = logs.length;
      replica.announce(position, settled);
      await expire(
        logged((line) => logs.indexOf(line) >= before && /could not be announced/.test(String(line.msg))),
        'the lost announcement logged',
      );
      stored.push(position);
    }
    // This replica never heard of them: its timer reads them.
    await received.atLeast(2);
    expect(positions()).toEqual(stored);
    expect(await reads({ trigger: 'wake' })).toBe(0);
    expect(await reads({ trigger: 'timer', outcome: 'ok' })).toBeGreaterThan(0);
  });

  test('sends an announcement still pending when it closes', async () => {
    const { store } = await setUp();
    const published: unknown[] = [];
    const recording: PubSub = { ...deafPubSub, publish: async (_topic, payload) => void published.push(payload) };
    const log = await startNotificationFeed({ store, pubsub: recording, metrics: createMetrics(), logger: silent });
    const { position, settled } = await insertQuietly(store);
    log.announce(position, settled);
    await log.close();
    expect(published).toEqual([{ replica: expect.any(String) }]);
  });

  test('announces a commit made while the previous message is still being published', async () => {
    const { store } = await setUp();
    const published = new Inbox<unknown>();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The first publish stays unanswered until released, as a slow Redis round trip would.
    const slow: PubSub = {
      ...deafPubSub,
      publish: async (_topic, payload) => (published.push(payload), published.length === 1 ? held : undefined),
    };
    const log = await startNotificationFeed({ store, pubsub: slow, metrics: createMetrics(), logger: silent });
    onCleanup(() => log.close());
    const first = await insertQuietly(store);
    log.announce(first.position, first.settled);
    await published.atLeast(1);
    const second = await insertQuietly(store);
    log.announce(second.position, second.settled);
    release();
    // Without a second message, the other replicas would wait for their timer.
    expect(await published.atLeast(2)).toHaveLength(2);
  });

  test('reads page by page until caught up, from one wake', async () => {
    const gate = Promise.withResolvers<void>();
    const pages: number[] = [];
    const { store, open, nudge } = await setUp({
      wrap: (read) => async (query) => {
        await gate.promise;
        const page = await read(query);
        pages.push(page.length);
        return page;
      },
    });
    const log = await open();
    const { listener, positions, received } = recorder();
    log.follow(listener);
    // Its first read is held at its first page until two full pages of 500 and one row are stored.
    await nudge();
    const stored = await Promise.all(Array.from({ length: 1_001 }, () => store.insert(newNotification())));
    await untilSettled(store, stored);
    gate.resolve();
    await received.atLeast(1_001, 20_000);
    expect(positions()).toEqual(stored.map(positionOf).sort((x, y) => comparePositions(x!, y!)));
    // That one read went on until a page came back short; any read after it found nothing new.
    expect(pages.slice(0, 3)).toEqual([500, 500, 1]);
    expect(pages.slice(3).filter((length) => length > 0)).toEqual([]);
  }, 40_000);

  test('folds the wakes that arrive during a read into one more read', async () => {
    const held = Promise.withResolvers<void>();
    const started = Promise.withResolvers<void>();
    let calls = 0;
    const { store, pubsub, nudge, open, reads } = await setUp({
      wrap: (read) => async (query) => {
        calls += 1;
        // Its position at start comes from settledHead: this is the first read, held.
        if (calls === 1) {
          started.resolve();
          await held.promise;
        }
        return read(query);
      },
    });
    const log = await open();
    const { listener, positions, reached } = recorder();
    log.follow(listener);
    await nudge();
    await started.promise;
    const late = await store.insert(newNotification());
    if (late.status !== 'inserted') throw new Error('not inserted');
    await untilSettled(store, [late]);
    // Ten wakes while the read is held, from several replicas.
    for (let i = 0; i < 10; i += 1) await pubsub.publish('notificationsStored', { replica: `replica ${i % 3}` });
    held.resolve();
    // The held read (which runs its query once let go) hands `late` out; then one more read.
    await reached(late.notification.position);
    await waitFor(async () => ((await reads({})) >= 2 ? true : undefined));
    expect(calls).toBeGreaterThanOrEqual(2);
    // Eleven wakes, two reads at most: the safety-net timer (every second) may add reads of its own.
    await nextTurn();
    expect(await reads({ trigger: 'wake' })).toBeLessThanOrEqual(2);
    expect(positions()).toEqual([positionOf(late)]);
  });

  test('reads on its timer when pub/sub never delivers', async () => {
    const { deliver, open, reads } = await setUp({ pubsub: deafPubSub });
    const log = await open();
    const { listener, positions, received } = recorder();
    log.follow(listener);
    const sent = [await deliver(), await deliver()].map((n) => n.position);
    await received.atLeast(2);
    expect(positions()).toEqual(sent);
    expect(await reads({ trigger: 'timer', outcome: 'ok' })).toBeGreaterThan(0);
    expect(await reads({ trigger: 'wake' })).toBe(0);
  });

  test('skips nothing and repeats nothing when a read fails and a later one succeeds', async () => {
    let failing = false;
    const { store, deliver, nudge, open, reads } = await setUp({
      wrap: (read) => async (query) => {
        if (failing) throw new Error('connection reset');
        return read(query);
      },
    });
    const log = await open();
    const { listener, positions, reached } = recorder();
    log.follow(listener);
    const first = await store.insert(newNotification());
    failing = true;
    await nudge();
    await waitFor(async () => ((await reads({ outcome: 'error' })) === 1 ? true : undefined));
    const second = await store.insert(newNotification());
    await untilSettled(store, [first, second]);
    failing = false;
    // The next announcement is read from where the failed read left off, and handed out after both.
    const next = await deliver();
    await reached(next.position);
    expect(positions()).toEqual([positionOf(first), positionOf(second), next.position]);
  });

  test('keeps handing out to the others when a listener throws, and nothing after stop()', async () => {
    const { deliver, open } = await setUp();
    const log = await open();
    log.follow(() => {
      throw new Error('a broken subscriber');
    });
    const leaving = recorder();
    const staying = recorder();
    const following = log.follow(leaving.listener);
    log.follow(staying.listener);
    const first = await deliver();
    await staying.received.atLeast(1);
    following.stop();
    const second = await deliver();
    await staying.received.atLeast(2);
    expect(staying.positions()).toEqual([first.position, second.position]);
    expect(leaving.positions()).toEqual([first.position]);
  });

  testShared('misses no row committed by another store while it reads concurrently', async () => {
    // Two replicas on one database, inserting at once while this log reads at each of their wakes: it reads
    // only the settled log, where nothing can commit below a position already read.
    const { database, store, deliver, open } = await setUp();
    const other = await database.open();
    const log = await open();
    const { listener, positions, reached } = recorder();
    log.follow(listener);
    const delivered = await Promise.all(Array.from({ length: 100 }, (_, i) => deliver(i % 2 ? other : store)));
    await untilSettled(
      store,
      delivered.map((n) => n.position),
    );
    const all = (await store.listAfter({ after: START_OF_LOG, limit: 500 })).map((n) => n.position);
    expect(all).toHaveLength(100);
    // Handed out after all of them: a row missed or handed out twice would show before it.
    const last = (await deliver()).position;
    await reached(last);
    expect(positions()).toEqual([...all, last]);
  });
});
