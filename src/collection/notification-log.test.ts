import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification } from '../../test/helpers/notifications.ts';
import { silent, storeBackends } from '../../test/helpers/stores.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import type { CollectionNotificationRecord } from '../domain/index.ts';
import { createMetrics } from '../metrics.ts';
import { createPubSub } from '../pubsub/index.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';
import { startNotificationLog, type NotificationLogOptions } from './notification-log.ts';

/** A pub/sub whose messages never arrive (Redis cut off): only the timer can wake the log. */
const deafPubSub: PubSub = {
  kind: 'redis',
  publish: async () => {},
  subscribe: async () => async () => {},
  onInterruption: () => () => undefined,
  ping: async () => {},
  close: async () => {},
};

/** The store with its `listAfter` wrapped, to count, hold or fail the log's reads. */
function wrapListAfter(store: NotificationStore, wrap: (read: NotificationStore['listAfter']) => NotificationStore['listAfter']) {
  const listAfter = wrap((query) => store.listAfter(query));
  return new Proxy(store, {
    get: (target, property) => (property === 'listAfter' ? listAfter : Reflect.get(target, property, target)),
  });
}

/** Stores one new notification without telling anyone; its seq. */
async function insertQuietly(store: NotificationStore): Promise<number> {
  const result = await store.insert(newNotification());
  if (result.status !== 'inserted') throw new Error('not inserted');
  return result.notification.seq;
}

/** Everything a listener was handed, by seq and settlementId. */
function recorder() {
  const received: CollectionNotificationRecord[] = [];
  return { received, listener: (n: CollectionNotificationRecord) => void received.push(n), seqs: () => received.map((n) => n.seq) };
}

describe.each(storeBackends)('the notification log on $name', (backend) => {
  const test = it.runIf(backend.enabled);
  const testShared = it.runIf(backend.enabled && backend.shared);

  /** A fresh database, a store on it, memory pub/sub unless given, and a log following it (closed after). */
  async function setUp(options: NotificationLogOptions & { pubsub?: PubSub; wrap?: Parameters<typeof wrapListAfter>[1] } = {}) {
    const database = await backend.create();
    const raw = await database.open();
    const store = options.wrap ? wrapListAfter(raw, options.wrap) : raw;
    const pubsub = options.pubsub ?? (await createPubSub('memory:', { logger: silent }));
    onCleanup(() => pubsub.close());
    const metrics = createMetrics();
    const start = () => startNotificationLog({ store, pubsub, metrics, logger: silent }, { pollIntervalMs: 60_000, ...options });
    /** Stores and publishes one notification, as the webhook does. */
    const deliver = async (into: NotificationStore = raw) => {
      const result = await into.insert(newNotification());
      if (result.status !== 'inserted') throw new Error('not inserted');
      await pubsub.publish('notificationsStored', { seq: result.notification.seq });
      return result.notification;
    };
    /** Reads counted by the log's metric, of one trigger and/or outcome. */
    const reads = async (labels: { trigger?: string; outcome?: string }) => {
      const { values } = await metrics.logReads.get();
      const matching = values.filter((v) => (!labels.trigger || v.labels.trigger === labels.trigger) && (!labels.outcome || v.labels.outcome === labels.outcome));
      return matching.reduce((sum, v) => sum + v.value, 0);
    };
    const open = async () => {
      const log = await start();
      onCleanup(() => log.close());
      return log;
    };
    return { database, store: raw, deliver, open, reads, metrics };
  }

  test('starts at the newest stored notification and hands out only what is stored after it', async () => {
    const { deliver, open, metrics } = await setUp();
    await deliver();
    const newest = await deliver();
    const log = await open();
    const { listener, seqs } = recorder();
    expect(log.follow(listener).position).toBe(newest.seq);
    const later = [await deliver(), await deliver()];
    await waitFor(() => (seqs().length === 2 ? true : undefined));
    expect(seqs()).toEqual(later.map((n) => n.seq));
    expect((await metrics.logPosition.get()).values[0]?.value).toBe(later[1]!.seq);
  });

  test('hands each notification to every listener in position order, once, however often it is woken', async () => {
    const { deliver, open } = await setUp();
    const log = await open();
    const [one, two] = [recorder(), recorder()];
    log.follow(one.listener);
    log.follow(two.listener);
    const sent: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      sent.push((await deliver()).seq);
      log.wake('wake');
      log.wake('timer');
    }
    await waitFor(() => (one.seqs().length >= 20 && two.seqs().length >= 20 ? true : undefined));
    await log.settled();
    expect(one.seqs()).toEqual(sent);
    expect(two.seqs()).toEqual(sent);
  });

  test('announces the commits of one event-loop turn as one message with the highest position', async () => {
    const { store, open } = await setUp();
    const log = await open();
    const pubsub = await createPubSub('memory:', { logger: silent });
    onCleanup(() => pubsub.close());
    const published: unknown[] = [];
    const spy: PubSub = Object.assign(Object.create(pubsub) as PubSub, {
      publish: async (topic: string, payload: unknown) => void published.push({ topic, payload }),
    });
    const other = await startNotificationLog({ store, pubsub: spy, metrics: createMetrics(), logger: silent }, { pollIntervalMs: 60_000 });
    onCleanup(() => other.close());
    const stored: number[] = [];
    for (let i = 0; i < 5; i += 1) stored.push(await insertQuietly(store));
    for (const seq of stored) other.announce(seq);
    expect(published).toEqual([]); // not inside the turn that committed
    await waitFor(() => (published.length > 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(published).toEqual([{ topic: 'notificationsStored', payload: { seq: stored[4] } }]);
    expect(log.position).toBe(0); // its own pub/sub never carried the spy's message
  });

  test('moves its position to an announced one without reading while nobody listens', async () => {
    const { deliver, open, reads } = await setUp();
    const log = await open();
    const skipped = await deliver();
    await waitFor(() => (log.position === skipped.seq ? true : undefined));
    expect(await reads({})).toBe(0);
    const { listener, seqs } = recorder();
    expect(log.follow(listener).position).toBe(skipped.seq);
    const next = await deliver();
    await waitFor(() => (seqs().length === 1 ? true : undefined));
    expect(seqs()).toEqual([next.seq]);
  });

  test('answers an announcement it cannot publish with a log line, and the others read it on their timer', async () => {
    const { store, open } = await setUp();
    const log = await open();
    const { listener, seqs } = recorder();
    log.follow(listener);
    const failing: PubSub = { ...deafPubSub, publish: async () => Promise.reject(new Error('redis down')) };
    const lines: unknown[] = [];
    const logger = Object.assign(Object.create(silent), { error: (fields: unknown) => void lines.push(fields) });
    const replica = await startNotificationLog({ store, pubsub: failing, metrics: createMetrics(), logger }, { pollIntervalMs: 60_000 });
    onCleanup(() => replica.close());
    const seq = await insertQuietly(store);
    expect(() => replica.announce(seq)).not.toThrow();
    await waitFor(() => (lines.length === 1 ? true : undefined));
    expect(lines[0]).toMatchObject({ seq });
    expect(seqs()).toEqual([]); // the message never came
    log.wake('timer');
    await log.settled();
    expect(seqs()).toEqual([seq]);
  });

  test('sends an announcement still pending when it closes', async () => {
    const { store } = await setUp();
    const published: unknown[] = [];
    const recording: PubSub = { ...deafPubSub, publish: async (_topic, payload) => void published.push(payload) };
    const log = await startNotificationLog({ store, pubsub: recording, metrics: createMetrics(), logger: silent }, { pollIntervalMs: 60_000 });
    const seq = await insertQuietly(store);
    log.announce(seq);
    await log.close();
    expect(published).toEqual([{ seq }]);
  });

  test('reads page by page until caught up, from one wake', async () => {
    const { store, open, reads } = await setUp({ pageSize: 3 });
    const log = await open();
    const { listener, seqs } = recorder();
    log.follow(listener);
    const stored = [];
    for (let i = 0; i < 10; i += 1) stored.push(await store.insert(newNotification()));
    log.wake('wake');
    await log.settled();
    expect(seqs()).toEqual(stored.map((r) => (r.status === 'inserted' ? r.notification.seq : -1)));
    expect(await reads({ trigger: 'wake', outcome: 'ok' })).toBe(4);
  });

  test('folds the wakes that arrive during a read into one more read', async () => {
    const held = Promise.withResolvers<void>();
    const started = Promise.withResolvers<void>();
    let calls = 0;
    const { store, open, reads } = await setUp({
      wrap: (read) => async (query) => {
        calls += 1;
        // Its position at start comes from listNewestFirst: this is the first read, held.
        if (calls === 1) {
          started.resolve();
          await held.promise;
        }
        return read(query);
      },
    });
    const log = await open();
    const { listener, seqs } = recorder();
    log.follow(listener);
    log.wake('wake');
    await started.promise;
    const late = await store.insert(newNotification());
    for (let i = 0; i < 10; i += 1) log.wake(i % 2 ? 'wake' : 'timer');
    held.resolve();
    await log.settled();
    expect(calls).toBe(2);
    expect(await reads({})).toBe(2);
    expect(seqs()).toEqual([late.status === 'inserted' ? late.notification.seq : -1]);
  });

  test('reads on its timer when pub/sub never delivers', async () => {
    const { deliver, open, reads } = await setUp({ pubsub: deafPubSub, pollIntervalMs: 25 });
    const log = await open();
    const { listener, seqs } = recorder();
    log.follow(listener);
    const sent = [await deliver(), await deliver()].map((n) => n.seq);
    await waitFor(() => (seqs().length === 2 ? true : undefined));
    expect(seqs()).toEqual(sent);
    expect(await reads({ trigger: 'timer', outcome: 'ok' })).toBeGreaterThan(0);
    expect(await reads({ trigger: 'wake' })).toBe(0);
  });

  test('skips nothing and repeats nothing when a read fails and a later one succeeds', async () => {
    let failing = false;
    const { store, open, reads } = await setUp({
      wrap: (read) => async (query) => {
        if (failing) throw new Error('connection reset');
        return read(query);
      },
    });
    const log = await open();
    const { listener, seqs } = recorder();
    log.follow(listener);
    const first = await store.insert(newNotification());
    failing = true;
    log.wake('wake');
    await log.settled();
    expect(await reads({ outcome: 'error' })).toBe(1);
    const second = await store.insert(newNotification());
    failing = false;
    log.wake('timer');
    await log.settled();
    expect(seqs()).toEqual([first, second].map((r) => (r.status === 'inserted' ? r.notification.seq : -1)));
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
    await waitFor(() => (staying.seqs().length === 1 ? true : undefined));
    following.stop();
    const second = await deliver();
    await waitFor(() => (staying.seqs().length === 2 ? true : undefined));
    expect(staying.seqs()).toEqual([first.seq, second.seq]);
    expect(leaving.seqs()).toEqual([first.seq]);
  });

  testShared('misses no row committed by another store while it reads concurrently', async () => {
    // Two replicas on one database, inserting at once while this log reads all the time: seq in
    // commit order means nothing can commit below a position already read.
    const { database, store, deliver, open } = await setUp({ pollIntervalMs: 1 });
    const other = await database.open();
    const log = await open();
    const { listener, seqs } = recorder();
    log.follow(listener);
    await Promise.all(Array.from({ length: 100 }, (_, i) => deliver(i % 2 ? other : store)));
    const all = (await store.listAfter({ afterSeq: 0, limit: 500 })).map((n) => n.seq);
    expect(all).toHaveLength(100);
    await waitFor(() => (seqs().length >= 100 ? true : undefined));
    await log.settled();
    expect(seqs()).toEqual(all);
  });
});
