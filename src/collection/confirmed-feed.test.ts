import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification } from '../../test/helpers/notifications.ts';
import { withMethod } from '../../test/helpers/proxy.ts';
import { silent, storeBackends, untilSettled } from '../../test/helpers/stores.ts';
import { Inbox, waitFor } from '../../test/helpers/wait.ts';
import { PENDING, type CollectionNotificationRecord, type ConfirmationOutcome, type NewCollectionNotification } from '../domain/index.ts';
import { createMetrics } from '../metrics.ts';
import { createPubSub } from '../pubsub/index.ts';
import type { CollectionStore } from '../store/types.ts';
import { startConfirmedFeed } from './confirmed-feed.ts';
import { startNotificationFeed } from './notification-feed.ts';

const decided = (settlementId: string, status: ConfirmationOutcome['status'] = 'CONFIRMED'): ConfirmationOutcome => ({
  settlementId,
  status,
  checkedAt: '2026-11-22T13:05:10.000Z',
  differences: status === 'MISMATCHED' ? ['transactionAmount'] : [],
  acknowledgedByBank: status === 'NOT_AT_BANK' ? null : true,
});

describe.each(storeBackends)('the confirmed feed on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;

  /** A store (its log reads counted), memory pub/sub, the notification feed and the confirmed feed behind it. */
  async function setUp() {
    const database = await backend.create();
    const raw = await database.open();
    let reads = 0;
    const store: CollectionStore = withMethod(raw, 'listAfter', (query) => {
      reads += 1;
      return raw.listAfter(query);
    });
    const pubsub = await createPubSub('memory:', { logger: silent, channelPrefix: 'test:' });
    onCleanup(() => pubsub.close());
    const notificationFeed = await startNotificationFeed({ store, pubsub, metrics: createMetrics(), logger: silent });
    onCleanup(() => notificationFeed.close());
    const feed = await startConfirmedFeed({ store, pubsub, notificationFeed, logger: silent });
    onCleanup(() => feed.close());
    const received = new Inbox<CollectionNotificationRecord>();
    /** Stores a notification as the webhook does, and tells the notification feed. */
    const deliver = async (notification: NewCollectionNotification) => {
      const result = await store.insert(notification);
      if (result.status !== 'inserted') throw new Error('not inserted');
      await untilSettled(store, [result]);
      notificationFeed.announce(result.notification.position, result.settled);
      return result.notification;
    };
    return { store, pubsub, feed, deliver, received, follow: () => feed.follow((n) => void received.push(n)), reads: () => reads };
  }

  test('hands out CONFIRMED notifications in log order, once, passing the others, and stops at the first PENDING one', async () => {
    const { store, feed, deliver, received, follow } = await setUp();
    follow();
    const [a, b, c, d] = [
      newNotification({ confirmation: PENDING }),
      newNotification({ confirmation: PENDING }),
      newNotification({ confirmation: PENDING }),
      newNotification({ confirmation: PENDING }),
    ];
    for (const one of [a, b, c, d]) await deliver(one);
    await store.confirmations.record([
      decided(b.settlementId),
      decided(c.settlementId, 'NOT_AT_BANK'),
      decided(d.settlementId, 'MISMATCHED'),
    ]);
    feed.decided();
    await waitFor(async () => ((await store.confirmations.decision()).pendingAt !== undefined ? true : undefined));
    const e = newNotification({ confirmation: PENDING });
    await deliver(e);

    await store.confirmations.record([decided(a.settlementId)]);
    feed.decided();
    await received.atLeast(2);
    await store.confirmations.record([decided(e.settlementId)]);
    feed.decided();
    await received.atLeast(3);
    expect(received.map((n) => n.settlementId)).toEqual([a.settlementId, b.settlementId, e.settlementId]);
    expect(received.every((n) => n.confirmation.status === 'CONFIRMED')).toBe(true);
    await waitFor(async () => (feed.position.seq === (await store.confirmations.decidedHead()).seq ? true : undefined));
  });

  test('with nobody following, moves to the decided head without reading a notification', async () => {
    const { store, feed, deliver, reads } = await setUp();
    const [a, b] = [newNotification({ confirmation: PENDING }), newNotification({ confirmation: PENDING })];
    const atA = await deliver(a);
    const atB = await deliver(b);
    await store.confirmations.record([decided(a.settlementId)]);
    feed.decided();
    await waitFor(() => (feed.position.seq === atB.position.seq - 1 ? true : undefined));
    expect(feed.position.txid).toBe(atB.position.txid);
    expect(feed.position.seq).toBeGreaterThanOrEqual(atA.position.seq);
    await store.confirmations.record([decided(b.settlementId, 'NOT_AT_BANK')]);
    feed.decided();
    await waitFor(() => (feed.position.seq === atB.position.seq ? true : undefined));
    expect(reads()).toBe(0);
  });

  test('hands out on the commit a notification stored already confirmed (an import), with no outcome to wake it', async () => {
    const { deliver, received, follow } = await setUp();
    follow();
    const imported = newNotification({ source: 'RECONCILED', confirmation: { ...decided('x'), status: 'CONFIRMED' } });
    await deliver(imported);
    await received.atLeast(1);
    expect(received[0]).toMatchObject({ settlementId: imported.settlementId, source: 'RECONCILED', confirmation: { status: 'CONFIRMED' } });
  });

  test("reads again on another replica's message, which names no position: a stale or forged one costs a read, never a repeat", async () => {
    const { store, pubsub, deliver, received, follow, reads } = await setUp();
    follow();
    const one = newNotification({ confirmation: PENDING });
    await deliver(one);
    // Decided elsewhere: this replica hears only the message.
    await store.confirmations.record([decided(one.settlementId)]);
    await pubsub.publish('notificationsConfirmed', { replica: 'another replica' });
    await received.atLeast(1);
    const before = reads();
    for (const replica of ['another replica', 'x'.repeat(10_000), '']) await pubsub.publish('notificationsConfirmed', { replica });
    const marker = newNotification({ confirmation: PENDING });
    await deliver(marker);
    await store.confirmations.record([decided(marker.settlementId)]);
    await pubsub.publish('notificationsConfirmed', { replica: 'another replica' });
    await received.atLeast(2);
    expect(received.map((n) => n.settlementId)).toEqual([one.settlementId, marker.settlementId]);
    expect(reads()).toBeGreaterThan(before);
  });
});
