import { describe, expect, it } from 'vitest';
import { silent } from '../../test/helpers/stores.ts';
import { Inbox, nextTurn } from '../../test/helpers/wait.ts';
import type { PubSub } from '../pubsub/types.ts';
import { createAnnouncer } from './feed-announcer.ts';

/** A pub/sub that records when each message was published. */
function recordingPubSub() {
  const published = new Inbox<{ at: number; topic: string; payload: unknown }>();
  const pubsub: PubSub = {
    kind: 'memory',
    publish: async (topic, payload) => void published.push({ at: performance.now(), topic, payload }),
    subscribe: async () => async () => {},
    onInterruption: () => () => undefined,
    connected: true,
    close: async () => {},
  };
  return { pubsub, published };
}

describe('the announcer of a log follower', () => {
  it('publishes a busy stream of commits at most once per interval, the first at once and the last commits too', async () => {
    const { pubsub, published } = recordingPubSub();
    // Long enough that the commits below, a turn apart, all fall inside one interval on a loaded machine.
    const announcer = createAnnouncer({ pubsub, logger: silent }, 500);
    const started = performance.now();
    announcer.announce();
    // The first message of a quiet spell is not held back by the interval.
    expect((await published.atLeast(1))[0]!.at - started).toBeLessThan(400);
    // Commits in later turns, while the interval runs: held, then sent together as one message.
    for (let i = 0; i < 3; i += 1) {
      await nextTurn();
      announcer.announce();
    }
    const [first, second] = await published.atLeast(2);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(495);
    await announcer.flush();
    expect(published).toHaveLength(2);
    expect(published.map((message) => message.payload)).toEqual([{ replica: announcer.replica }, { replica: announcer.replica }]);
    expect(published.map((message) => message.topic)).toEqual(['notificationsStored', 'notificationsStored']);
  });
});
