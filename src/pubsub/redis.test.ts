import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { serviceUrl, uniqueChannelPrefix } from '../../test/helpers/services.ts';
import { startTcpProxy } from '../../test/helpers/tcp-proxy.ts';
import { expire, Inbox, waitFor } from '../../test/helpers/wait.ts';
import { createLogger } from '../logger.ts';
import { createPubSub } from './index.ts';

const logger = createLogger('silent');
const redisUrl = serviceUrl('REDIS_URL');

/** Positions of one test, told apart by what they stand for. */
const SEQ = { duringOutage: 1, afterOutage: 1_000, subscribedAgain: 2 };

describe('createPubSub', () => {
  it('refuses a URL that is neither memory: nor redis:, without repeating it', async () => {
    const attempt = createPubSub('amqp://user:hunter2-password@queue.internal', { logger });
    await expect(attempt).rejects.toThrow('PUBSUB_URL must be memory: or redis://');
    await expect(attempt).rejects.not.toThrow(/hunter2|queue\.internal/);
  });

  it('rejects within the connect timeout when Redis is unreachable, naming the cause but not the URL', async () => {
    const attempt = createPubSub('redis://:hunter2-password@127.0.0.1:1/0', { logger, connectTimeoutMs: 300 });
    await expect(attempt).rejects.toThrow(/not reachable within 300 ms: ECONNREFUSED/);
    await expect(attempt).rejects.not.toThrow(/hunter2|127\.0\.0\.1/);
  });
});

describe.skipIf(redisUrl === undefined)('Redis pub/sub through an outage', () => {
  it('fails fast while Redis is unreachable and heals by itself when it returns', async () => {
    const relay = await startTcpProxy(redisUrl!);
    const channelPrefix = uniqueChannelPrefix();
    const subscribed = await createPubSub(relay.url, { logger, channelPrefix });
    const fresh = await createPubSub(relay.url, { logger, channelPrefix });
    onCleanup(() => subscribed.close());
    onCleanup(() => fresh.close());
    const received: number[] = [];
    await subscribed.subscribe('notificationsStored', (payload) => received.push(payload.seq));
    const leaving = await subscribed.subscribe('notificationsStored', () => {});
    let interruptions = 0;
    const interrupted = Promise.withResolvers<void>();
    subscribed.onInterruption(() => {
      interruptions += 1;
      interrupted.resolve();
    });

    relay.cut();
    await waitFor(() => subscribed.ping().then(() => undefined, (error: unknown) => error));
    const started = performance.now();
    await expect(subscribed.ping()).rejects.toThrow();
    await expect(subscribed.publish('notificationsStored', { seq: SEQ.duringOutage })).rejects.toThrow();
    await expect(fresh.subscribe('notificationsStored', () => {})).rejects.toThrow();
    // Each fails at once (about a millisecond); one queued for Redis's return would wait as long as
    // the outage lasts. The bound leaves a loaded machine all the room it needs.
    expect(performance.now() - started).toBeLessThan(5_000);
    await expect(leaving()).resolves.toBeUndefined(); // local: nothing to send, nothing to fail
    // Live subscribers are told of the loss, to catch up from the store.
    await expire(interrupted.promise, 'the interruption');

    relay.restore();
    await waitFor(() => Promise.all([subscribed.ping(), fresh.ping()]).then(() => true), 10_000);
    // The old subscription is renewed by ioredis shortly after reconnecting; poll with new markers.
    let attempt = 0;
    await waitFor(async () => {
      await fresh.publish('notificationsStored', { seq: SEQ.afterOutage + (attempt += 1) });
      return received.length > 0 ? true : undefined;
    }, 10_000);
    expect(received.every((seq) => seq > SEQ.afterOutage)).toBe(true);

    const inbox = new Inbox<number>();
    await fresh.subscribe('notificationsStored', (payload) => inbox.push(payload.seq));
    await subscribed.publish('notificationsStored', { seq: SEQ.subscribedAgain });
    await inbox.first((seq) => seq === SEQ.subscribedAgain);
    expect(interruptions).toBe(1); // once per loss, not per reconnect attempt
  });
});
