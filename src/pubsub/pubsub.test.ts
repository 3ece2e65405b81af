import { beforeEach, describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { serviceUrl, uniqueChannelPrefix } from '../../test/helpers/services.ts';
import { createLogger } from '../logger.ts';
import { createPubSub } from './index.ts';
import type { PubSub, TopicMap } from './types.ts';

const logger = createLogger('silent');

// One suite, every backend. Without REDIS_URL the Redis case is skipped (under CI=true it throws).
const BACKENDS: Array<{ kind: PubSub['kind']; url: string | undefined }> = [
  { kind: 'memory', url: 'memory:' },
  { kind: 'redis', url: serviceUrl('REDIS_URL') },
];

let counter = 0;

type Message = TopicMap['notificationsStored'];

/** A message no other test sends: told apart by the replica it names. */
function notification(): Message {
  counter += 1;
  return { replica: `replica-${counter}-ä` };
}

/** A listener that records what arrives and lets a test wait for one position. */
function createInbox() {
  const received: Message[] = [];
  const waiting = new Map<string, (payload: Message) => void>();
  return {
    received,
    ids: () => received.map((payload) => payload.replica),
    listener(payload: Message) {
      received.push(payload);
      waiting.get(payload.replica)?.(payload);
    },
    /** Resolves when the position arrives; fails after `expireMs` so a lost message fails fast. */
    receive(replica: string, expireMs = 5_000): Promise<Message> {
      const found = received.find((payload) => payload.replica === replica);
      if (found) return Promise.resolve(found);
      const arrived = Promise.withResolvers<Message>();
      const timer = setTimeout(() => arrived.reject(new Error(`${replica} did not arrive`)), expireMs);
      waiting.set(replica, (payload) => {
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
    await pubsub.subscribe('notificationsStored', inbox.listener);
    const sent = notification();
    const marker = notification();
    await pubsub.publish('notificationsStored', sent);
    await pubsub.publish('notificationsStored', marker);
    await inbox.receive(marker.replica);
    expect(inbox.received).toStrictEqual([sent, marker]);
    expect(JSON.stringify(inbox.received[0])).toBe(JSON.stringify(sent));
  });

  test('gives each listener its own copy, never the publisher’s object', async () => {
    const pubsub = await open();
    const inbox = createInbox();
    await pubsub.subscribe('notificationsStored', inbox.listener);
    const sent = notification();
    await pubsub.publish('notificationsStored', sent);
    expect(await inbox.receive(sent.replica)).not.toBe(sent);
  });

  test('delivers to every subscriber, once each, when they subscribed concurrently', async () => {
    const pubsub = await open();
    const inboxes = [createInbox(), createInbox(), createInbox()];
    await Promise.all(inboxes.map((inbox) => pubsub.subscribe('notificationsStored', inbox.listener)));
    const sent = notification();
    const marker = notification();
    await pubsub.publish('notificationsStored', sent);
    await pubsub.publish('notificationsStored', marker);
    await Promise.all(inboxes.map((inbox) => inbox.receive(marker.replica)));
    for (const inbox of inboxes) expect(inbox.received).toStrictEqual([sent, marker]);
  });

  test('delivers nothing more to a listener after its unsubscribe resolves', async () => {
    const pubsub = await open();
    const leaving = createInbox();
    const staying = createInbox();
    const unsubscribe = await pubsub.subscribe('notificationsStored', leaving.listener);
    await pubsub.subscribe('notificationsStored', staying.listener);
    const first = notification();
    await pubsub.publish('notificationsStored', first);
    await leaving.receive(first.replica);

    await unsubscribe();
    await unsubscribe(); // a second call is harmless
    const marker = notification();
    await pubsub.publish('notificationsStored', marker);
    await staying.receive(marker.replica);
    expect(leaving.ids()).toEqual([first.replica]);
    expect(staying.ids()).toEqual([first.replica, marker.replica]);
  });

  test('a topic can be subscribed again after every listener left', async () => {
    const pubsub = await open();
    const unsubscribe = await pubsub.subscribe('notificationsStored', () => {});
    await unsubscribe();
    const inbox = createInbox();
    await pubsub.subscribe('notificationsStored', inbox.listener);
    const sent = notification();
    await pubsub.publish('notificationsStored', sent);
    expect(await inbox.receive(sent.replica)).toStrictEqual(sent);
  });

  test('publishes with no subscriber, and a later subscriber does not get that message', async () => {
    const pubsub = await open();
    const unheard = notification();
    await expect(pubsub.publish('notificationsStored', unheard)).resolves.toBeUndefined();
    const inbox = createInbox();
    await pubsub.subscribe('notificationsStored', inbox.listener);
    const marker = notification();
    await pubsub.publish('notificationsStored', marker);
    await inbox.receive(marker.replica);
    expect(inbox.ids()).toEqual([marker.replica]);
  });

  test('keeps delivering to the other listeners when one throws', async () => {
    const pubsub = await open();
    await pubsub.subscribe('notificationsStored', () => {
      throw new Error('listener failure');
    });
    const inbox = createInbox();
    await pubsub.subscribe('notificationsStored', inbox.listener);
    const first = notification();
    const second = notification();
    await pubsub.publish('notificationsStored', first);
    await pubsub.publish('notificationsStored', second);
    await inbox.receive(second.replica);
    expect(inbox.ids()).toEqual([first.replica, second.replica]);
  });

  test('says it is connected while open, and rejects publish and subscribe after close', async () => {
    const pubsub = await open();
    expect(pubsub.connected).toBe(true);
    await pubsub.close();
    expect(pubsub.connected).toBe(false);
    await expect(pubsub.publish('notificationsStored', notification())).rejects.toThrow(/closed/);
    await expect(pubsub.subscribe('notificationsStored', () => {})).rejects.toThrow(/closed/);
  });

  test('closes idempotently, with subscribers still attached', async () => {
    const pubsub = await open();
    const unsubscribe = await pubsub.subscribe('notificationsStored', () => {});
    await Promise.all([pubsub.close(), pubsub.close()]);
    await expect(pubsub.close()).resolves.toBeUndefined();
    await expect(unsubscribe()).resolves.toBeUndefined();
  });

  // Only Redis is shared between instances; in memory each instance is its own world.
  describe.runIf(kind === 'redis')('instances sharing one Redis server', () => {
    test('delivers once across two instances: one publishing, the other subscribed', async () => {
      const publisher = await open();
      const subscriber = await open();
      const inbox = createInbox();
      await subscriber.subscribe('notificationsStored', inbox.listener);
      const sent = notification();
      const marker = notification();
      await publisher.publish('notificationsStored', sent);
      await publisher.publish('notificationsStored', marker);
      await inbox.receive(marker.replica);
      expect(inbox.received).toStrictEqual([sent, marker]);
    });

    test('delivers to the subscribers of every instance, the publisher’s own included', async () => {
      const replicas = [await open(), await open(), await open()];
      const inboxes = replicas.map(() => createInbox());
      await Promise.all(replicas.map((replica, i) => replica.subscribe('notificationsStored', inboxes[i]!.listener)));
      const sent = notification();
      const marker = notification();
      await replicas[0]!.publish('notificationsStored', sent);
      await replicas[0]!.publish('notificationsStored', marker);
      await Promise.all(inboxes.map((inbox) => inbox.receive(marker.replica)));
      for (const inbox of inboxes) expect(inbox.received).toStrictEqual([sent, marker]);
    });

    test('keeps deployments with different channel prefixes apart', async () => {
      const ours = await open();
      const theirs = await open(uniqueChannelPrefix());
      const inbox = createInbox();
      await theirs.subscribe('notificationsStored', inbox.listener);
      await ours.publish('notificationsStored', notification());
      const marker = notification();
      // Published after ours was acknowledged: had ours leaked, it would arrive first.
      await theirs.publish('notificationsStored', marker);
      await inbox.receive(marker.replica);
      expect(inbox.ids()).toEqual([marker.replica]);
    });
  });
});
