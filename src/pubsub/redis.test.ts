import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { serviceUrl, uniqueChannelPrefix } from '../../test/helpers/services.ts';
import { startTcpProxy } from '../../test/helpers/tcp-proxy.ts';
import { captureLogs } from '../../test/helpers/logs.ts';
import { expire, Inbox, waitFor } from '../../test/helpers/wait.ts';
import { createLogger } from '../logger.ts';
import { createPubSub } from './index.ts';

const logger = createLogger('silent');
const redisUrl = serviceUrl('REDIS_URL');

describe('createPubSub', () => {
  it('refuses a URL that is neither memory: nor redis:, without repeating it', async () => {
    const attempt = createPubSub('amqp://user:hunter2-password@queue.internal', { logger, channelPrefix: 'test:' });
    await expect(attempt).rejects.toThrow('PUBSUB_URL must be memory: or redis://');
    await expect(attempt).rejects.not.toThrow(/hunter2|queue\.internal/);
  });

  it('starts without Redis when it is unreachable within the connect timeout, saying so with the cause but not the URL', async () => {
    const { logger: watched, logs } = captureLogs();
    const pubsub = await createPubSub('redis://:hunter2-password@127.0.0.1:1/0', {
      logger: watched,
      channelPrefix: 'test:',
      connectTimeoutMs: 300,
    });
    onCleanup(() => pubsub.close());
    expect(pubsub.connected).toBe(false);
    // A listener is taken (live once Redis answers); a message cannot be sent.
    await expect(pubsub.subscribe('notificationsStored', () => {})).resolves.toBeTypeOf('function');
    await expect(pubsub.publish('notificationsStored', { replica: 'r' })).rejects.toBeInstanceOf(Error);
    const warnings = logs.filter((line) => (line.level as number) === 40);
    expect(warnings).toEqual([
      expect.objectContaining({ error: 'ECONNREFUSED', msg: expect.stringContaining('PUBSUB_URL) is not reachable: starting without it') }),
    ]);
    expect(JSON.stringify(logs)).not.toMatch(/hunter2|127\.0\.0\.1/);
  });
});

describe.skipIf(redisUrl === undefined)('Redis pub/sub through an outage', () => {
  it('fails fast while Redis is unreachable, says so once, and heals by itself when it returns', async () => {
    const relay = await startTcpProxy(redisUrl!);
    const channelPrefix = uniqueChannelPrefix();
    const { logger: watched, logged, logs } = captureLogs();
    const subscribed = await createPubSub(relay.url, { logger: watched, channelPrefix });
    const fresh = await createPubSub(relay.url, { logger, channelPrefix });
    onCleanup(() => subscribed.close());
    onCleanup(() => fresh.close());
    const received: string[] = [];
    await subscribed.subscribe('notificationsStored', (payload) => received.push(payload.replica));
    const leaving = await subscribed.subscribe('notificationsStored', () => {});
    let interruptions = 0;
    const interrupted = Promise.withResolvers<void>();
    subscribed.onInterruption(() => {
      interruptions += 1;
      interrupted.resolve();
    });
    expect(subscribed.connected).toBe(true);

    relay.cut();
    await waitFor(() => (subscribed.connected ? undefined : true));
    const started = performance.now();
    await expect(subscribed.publish('notificationsStored', { replica: 'during the outage' })).rejects.toBeInstanceOf(Error);
    // A listener added during the outage is taken at once, and its channel subscribed once Redis is back.
    const lateInbox = new Inbox<string>();
    await fresh.subscribe('notificationsStored', (payload) => lateInbox.push(payload.replica));
    // Each answers at once (about a millisecond); one queued for Redis's return would wait as long as
    // the outage lasts. The bound leaves a loaded machine all the room it needs.
    expect(performance.now() - started).toBeLessThan(5_000);
    await expect(leaving()).resolves.toBeUndefined(); // local: nothing to send, nothing to fail
    // Live subscribers are told of the loss, to catch up from the store.
    await expire(interrupted.promise, 'the interruption');
    await logged((line) => String(line.msg).startsWith('Redis pub/sub link lost'));

    relay.restore();
    await waitFor(() => (subscribed.connected && fresh.connected ? true : undefined), 10_000);
    await logged((line) => String(line.msg).startsWith('Redis pub/sub link restored'));
    // The old subscription is renewed by ioredis shortly after reconnecting; poll with new markers.
    let attempt = 0;
    await waitFor(async () => {
      await fresh.publish('notificationsStored', { replica: `after the outage ${(attempt += 1)}` });
      return received.length > 0 ? true : undefined;
    }, 10_000);
    expect(received.every((replica) => replica.startsWith('after the outage'))).toBe(true);

    const inbox = new Inbox<string>();
    await fresh.subscribe('notificationsStored', (payload) => inbox.push(payload.replica));
    await subscribed.publish('notificationsStored', { replica: 'subscribed again' });
    await inbox.first((replica) => replica === 'subscribed again');
    await lateInbox.first((replica) => replica === 'subscribed again');
    expect(interruptions).toBe(1); // once per loss, not per reconnect attempt
    // One line for the loss and one for the return, however many reconnect attempts lay between.
    const linkLines = logs.filter((line) => String(line.msg).startsWith('Redis pub/sub link'));
    expect(linkLines.map((line) => line.msg)).toEqual([
      'Redis pub/sub link lost: live delivery goes on from the store every second; reconnecting',
      'Redis pub/sub link restored: replicas wake each other again',
    ]);
  });
});
