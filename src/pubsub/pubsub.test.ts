import { beforeEach, describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { storedNotification } from '../../test/helpers/notifications.ts';
import { serviceUrl, uniqueChannelPrefix } from '../../test/helpers/services.ts';
import type { CollectionNotificationRecord } from '../domain/index.ts';
import { createLogger } from '../logger.ts';
import { createPubSub } from './index.ts';
import type { PubSub } from './types.ts';

const logger = createLogger('silent');

// One suite, every backend. Without REDIS_URL the Redis case is skipped (under CI=true it throws).
const BACKENDS: Array<{ kind: PubSub['kind']; url: string | undefined }> = [
  { kind: 'memory', url: 'memory:' },
  { kind: 'redis', url: serviceUrl('REDIS_URL') },
];

let counter = 0;

/** A record whose every kind of value must survive the trip: big integer, nulls, escapes, non-ASCII. */
function notification(overrides: Partial<CollectionNotificationRecord> = {}): CollectionNotificationRecord {
  counter += 1;
  return storedNotification({
    seq: Number.MAX_SAFE_INTEGER - counter,
    settlementId: `STL-${counter}`,
    sessionId: '',
    transactionAmount: '1500.10',
    settledAmount: '1490.100',
    feeAmount: '0',
    vatAmount: null,
    narration: 'Rent “May” – café ₦ 😀 \u0000 line\nbreak',
    sourceBankName: null,
    channelId: '1',
    rawBody: '{"settlementId":"x","tranRemarks":"a\\"b"}',
    ...overrides,
  });
}

/** A listener that records what arrives and lets a test wait for one settlementId. */
function createInbox() {
  const received: CollectionNotificationRecord[] = [];
  const waiting = new Map<string, (payload: CollectionNotificationRecord) => void>();
  return {
    received,
    ids: () => received.map((payload) => payload.settlementId),
    listener(payload: CollectionNotificationRecord) {
      received.push(payload);
      waiting.get(payload.settlementId)?.(payload);
    },
    /** Resolves when the settlementId arrives; fails after `expireMs` so a lost message fails fast. */
    receive(settlementId: string, expireMs = 5_000): Promise<CollectionNotificationRecord> {
      const found = received.find((payload) => payload.settlementId === settlementId);
      if (found) return Promise.resolve(found);
      const arrived = Promise.withResolvers<CollectionNotificationRecord>();
      const timer = setTimeout(() => arrived.reject(new Error(`${settlementId} did not arrive`)), expireMs);
      waiting.set(settlementId, (payload) => {
        clearTimeout(timer);
        arrived.resolve(payload);
      });
      return arrived.promise;
    },
  };
}

describe.each(BACKENDS)('PubSub over $kind', ({ kind, url }) => {
  const test = url === undefined ? it.skip : it;
  let prefix = '';

  beforeEach(() => {
    prefix = uniqueChannelPrefix();
  });

  async function open(channelPrefix = prefix): Promise<PubSub> {
    const pubsub = await createPubSub(url!, { logger, channelPrefix });
    onCleanup(() => pubsub.close());
    return pubsub;
  }

  test('names its backend', async () => {
    expect((await open()).kind).toBe(kind);
  });

  test('delivers a payload published after subscribe resolves, exactly as sent, once', async () => {
    const pubsub = await open();
    const inbox = createInbox();
    await pubsub.subscribe('incomingTransfer', inbox.listener);
    const sent = notification();
    const marker = notification();
    await pubsub.publish('incomingTransfer', sent);
    await pubsub.publish('incomingTransfer', marker);
    await inbox.receive(marker.settlementId);
    expect(inbox.received).toStrictEqual([sent, marker]);
    expect(JSON.stringify(inbox.received[0])).toBe(JSON.stringify(sent));
  });

  test('gives each listener its own copy, never the publisher’s object', async () => {
    const pubsub = await open();
    const inbox = createInbox();
    await pubsub.subscribe('incomingTransfer', inbox.listener);
    const sent = notification();
    await pubsub.publish('incomingTransfer', sent);
    expect(await inbox.receive(sent.settlementId)).not.toBe(sent);
  });

  test('delivers to every subscriber, once each, when they subscribed concurrently', async () => {
    const pubsub = await open();
    const inboxes = [createInbox(), createInbox(), createInbox()];
    await Promise.all(inboxes.map((inbox) => pubsub.subscribe('incomingTransfer', inbox.listener)));
    const sent = notification();
    const marker = notification();
    await pubsub.publish('incomingTransfer', sent);
    await pubsub.publish('incomingTransfer', marker);
    await Promise.all(inboxes.map((inbox) => inbox.receive(marker.settlementId)));
    for (const inbox of inboxes) expect(inbox.received).toStrictEqual([sent, marker]);
  });

  test('delivers nothing more to a listener after its unsubscribe resolves', async () => {
    const pubsub = await open();
    const leaving = createInbox();
    const staying = createInbox();
    const unsubscribe = await pubsub.subscribe('incomingTransfer', leaving.listener);
    await pubsub.subscribe('incomingTransfer', staying.listener);
    const first = notification();
    await pubsub.publish('incomingTransfer', first);
    await leaving.receive(first.settlementId);

    await unsubscribe();
    await unsubscribe(); // a second call is harmless
    const marker = notification();
    await pubsub.publish('incomingTransfer', marker);
    await staying.receive(marker.settlementId);
    expect(leaving.ids()).toEqual([first.settlementId]);
    expect(staying.ids()).toEqual([first.settlementId, marker.settlementId]);
  });

  test('a topic can be subscribed again after every listener left', async () => {
    const pubsub = await open();
    const unsubscribe = await pubsub.subscribe('incomingTransfer', () => {});
    await unsubscribe();
    const inbox = createInbox();
    await pubsub.subscribe('incomingTransfer', inbox.listener);
    const sent = notification();
    await pubsub.publish('incomingTransfer', sent);
    expect(await inbox.receive(sent.settlementId)).toStrictEqual(sent);
  });

  test('publishes with no subscriber, and a later subscriber does not get that message', async () => {
    const pubsub = await open();
    const unheard = notification();
    await expect(pubsub.publish('incomingTransfer', unheard)).resolves.toBeUndefined();
    const inbox = createInbox();
    await pubsub.subscribe('incomingTransfer', inbox.listener);
    const marker = notification();
    await pubsub.publish('incomingTransfer', marker);
    await inbox.receive(marker.settlementId);
    expect(inbox.ids()).toEqual([marker.settlementId]);
  });

  test('keeps delivering to the other listeners when one throws', async () => {
    const pubsub = await open();
    await pubsub.subscribe('incomingTransfer', () => {
      throw new Error('listener failure');
    });
    const inbox = createInbox();
    await pubsub.subscribe('incomingTransfer', inbox.listener);
    const first = notification();
    const second = notification();
    await pubsub.publish('incomingTransfer', first);
    await pubsub.publish('incomingTransfer', second);
    await inbox.receive(second.settlementId);
    expect(inbox.ids()).toEqual([first.settlementId, second.settlementId]);
  });

  test('pings while open, and rejects ping, publish and subscribe after close', async () => {
    const pubsub = await open();
    await expect(pubsub.ping()).resolves.toBeUndefined();
    await pubsub.close();
    await expect(pubsub.ping()).rejects.toThrow(/closed/);
    await expect(pubsub.publish('incomingTransfer', notification())).rejects.toThrow(/closed/);
    await expect(pubsub.subscribe('incomingTransfer', () => {})).rejects.toThrow(/closed/);
  });

  test('closes idempotently, with subscribers still attached', async () => {
    const pubsub = await open();
    const unsubscribe = await pubsub.subscribe('incomingTransfer', () => {});
    await Promise.all([pubsub.close(), pubsub.close()]);
    await expect(pubsub.close()).resolves.toBeUndefined();
    await expect(unsubscribe()).resolves.toBeUndefined();
  });

  // Only Redis is shared between instances; in memory each instance is its own world.
  if (kind === 'redis') describe('instances sharing one Redis server', () => {
    test('delivers once across two instances: one publishing, the other subscribed', async () => {
      const publisher = await open();
      const subscriber = await open();
      const inbox = createInbox();
      await subscriber.subscribe('incomingTransfer', inbox.listener);
      const sent = notification();
      const marker = notification();
      await publisher.publish('incomingTransfer', sent);
      await publisher.publish('incomingTransfer', marker);
      await inbox.receive(marker.settlementId);
      expect(inbox.received).toStrictEqual([sent, marker]);
    });

    test('delivers to the subscribers of every instance, the publisher’s own included', async () => {
      const replicas = [await open(), await open(), await open()];
      const inboxes = replicas.map(() => createInbox());
      await Promise.all(replicas.map((replica, i) => replica.subscribe('incomingTransfer', inboxes[i]!.listener)));
      const sent = notification();
      const marker = notification();
      await replicas[0]!.publish('incomingTransfer', sent);
      await replicas[0]!.publish('incomingTransfer', marker);
      await Promise.all(inboxes.map((inbox) => inbox.receive(marker.settlementId)));
      for (const inbox of inboxes) expect(inbox.received).toStrictEqual([sent, marker]);
    });

    test('keeps deployments with different channel prefixes apart', async () => {
      const ours = await open();
      const theirs = await open(uniqueChannelPrefix());
      const inbox = createInbox();
      await theirs.subscribe('incomingTransfer', inbox.listener);
      await ours.publish('incomingTransfer', notification());
      const marker = notification();
      // Published after ours was acknowledged: had ours leaked, it would arrive first.
      await theirs.publish('incomingTransfer', marker);
      await inbox.receive(marker.settlementId);
      expect(inbox.ids()).toEqual([marker.settlementId]);
    });
  });
});
