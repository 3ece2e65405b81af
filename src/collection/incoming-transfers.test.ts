import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification } from '../../test/helpers/notifications.ts';
import { createLogger } from '../logger.ts';
import { createMetrics } from '../metrics.ts';
import { createPubSub } from '../pubsub/index.ts';
import type { PubSub } from '../pubsub/types.ts';
import { createNotificationStore } from '../store/index.ts';
import type { NotificationStore } from '../store/types.ts';
import { streamIncomingTransfers } from './incoming-transfers.ts';

const logger = createLogger('silent');
/** A real store and memory pub/sub (closed after the test), with the pub/sub's interruption under the test's control. */
async function setUp() {
  const store: NotificationStore = await createNotificationStore('sqlite::memory:', { logger });
  onCleanup(() => store.close());
  const memory = await createPubSub('memory:', { logger });
  onCleanup(() => memory.close());
  let interrupt = () => {};
  const pubsub = new Proxy(memory, {
    get(target, property) {
      if (property === 'onInterruption') {
        return (listener: () => void) => {
          interrupt = listener;
          return () => undefined;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as PubSub;
  const metrics = createMetrics();
  const deps = { store, pubsub, metrics, logger };
  /** Stores and publishes one notification, as the webhook does. */
  const deliver = async () => {
    const result = await store.insert(newNotification());
    if (result.status !== 'inserted') throw new Error('not inserted');
    await pubsub.publish('incomingTransfer', result.notification);
    return result.notification;
  };
  const live = async () => (await metrics.activeSubscriptions.get()).values[0]?.value ?? 0;
  return { deps, deliver, interrupt: () => interrupt(), live };
}

describe('streamIncomingTransfers', () => {
  it('counts a subscriber as active only once it is live, and not after it ends', async () => {
    const { deps, deliver, live } = await setUp();
    const stream = streamIncomingTransfers(deps, {});
    expect(await live()).toBe(0);
    const first = stream.next();
    // The executor starts on the first pull; a delivery after the gauge rises is never missed.
    while ((await live()) === 0) await new Promise((resolve) => setImmediate(resolve));
    const delivered = await deliver();
    expect((await first).value).toEqual(delivered);
    await stream.return?.();
    expect(await live()).toBe(0);
  });

  it('completes when live delivery is interrupted, so the client resumes from its cursor', async () => {
    const { deps, deliver, interrupt, live } = await setUp();
    const stream = streamIncomingTransfers(deps, {});
    const first = stream.next();
    while ((await live()) === 0) await new Promise((resolve) => setImmediate(resolve));
    await deliver();
    expect((await first).done).toBe(false);
    interrupt();
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it('completes a subscriber that stopped reading rather than drop notifications in between', async () => {
    const { deps, deliver, live } = await setUp();
    const stream = streamIncomingTransfers(deps, {});
    const first = stream.next();
    while ((await live()) === 0) await new Promise((resolve) => setImmediate(resolve));
    const sent = [];
    for (let i = 0; i < 2_100; i += 1) sent.push((await deliver()).settlementId);

    const received = [(await first).value!.settlementId];
    for (let next = await stream.next(); !next.done; next = await stream.next()) received.push(next.value.settlementId);
    // What arrived is an unbroken prefix of what was sent; the rest comes from a resume with `after`.
    expect(received.length).toBeGreaterThan(1_000);
    expect(received.length).toBeLessThan(sent.length);
    expect(received).toEqual(sent.slice(0, received.length));
  });
});
