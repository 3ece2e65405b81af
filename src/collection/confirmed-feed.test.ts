import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification } from '../../test/helpers/notifications.ts';
import { withMethod } from '../../test/helpers/proxy.ts';
import { silent, storeBackends, untilSettled } from '../../test/helpers/stores.ts';
import { Inbox, waitFor } from '../../test/helpers/wait.ts';
import {
  comparePositions,
  PENDING,
  type ConfirmationOutcome,
  type ConfirmedNotificationRecord,
  type NewCollectionNotification,
} from '../domain/index.ts';
import { createPubSub } from '../pubsub/index.ts';
import type { CollectionStore } from '../store/types.ts';
import { startConfirmedFeed } from './confirmed-feed.ts';

const decided = (settlementId: string, status: ConfirmationOutcome['status'] = 'CONFIRMED'): ConfirmationOutcome => ({
  settlementId,
  status,
  checkedAt: '2026-11-22T13:05:10.000Z',
  differences: status === 'MISMATCHED' ? ['transactionAmount'] : [],
  acknowledgedByBank: status === 'NOT_AT_BANK' ? null : true,
});

describe.each(storeBackends)('the confirmed feed on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;

  /** A store (its reads of the log of confirmations counted), memory pub/sub, and the confirmed feed. */
  async function setUp() {
    const database = await backend.create();
    const raw = await database.open();
    let reads = 0;
    const confirmationLog = withMethod(raw.confirmationLog, 'listAfter', (query) => {
      reads += 1;
      return raw.confirmationLog.listAfter(query);
    });
    const store: CollectionStore = withMethod(raw, 'confirmationLog', confirmationLog);
    const pubsub = await createPubSub('memory:', { logger: silent, channelPrefix: 'test:' });
    onCleanup(() => pubsub.close());
    const feed = await startConfirmedFeed({ store, pubsub, logger: silent });
    onCleanup(() => feed.close());
    const received = new Inbox<ConfirmedNotificationRecord>();
    /** Stores a notification as the webhook does. */
    const deliver = async (notification: NewCollectionNotification) => {
      const result = await store.insert(notification);
      if (result.status !== 'inserted') throw new Error('not inserted');
      await untilSettled(store, [result]);
      return result.notification;
    };
    /** Records outcomes as the confirmer does, and tells the feed. */
    const confirm = async (...outcomes: ConfirmationOutcome[]) => {
      await store.confirmations.record(outcomes);
      feed.decided();
    };
    return { store, pubsub, feed, deliver, confirm, received, follow: () => feed.follow((n) => void received.push(n)), reads: () => reads };
  }

  test('hands out each notification once, when it is CONFIRMED, in the order of the confirmations: one still PENDING holds back none', async () => {
    const { deliver, confirm, received, follow } = await setUp();
    follow();
    const [a, b, c, d] = Array.from({ length: 4 }, () => newNotification({ confirmation: PENDING }));
    for (const one of [a!, b!, c!, d!]) await deliver(one);
    // a waits for the bank: b, stored after it, is handed out as soon as it is confirmed.
    await confirm(decided(b!.settlementId), decided(c!.settlementId, 'NOT_AT_BANK'), decided(d!.settlementId, 'MISMATCHED'));
    await received.atLeast(1);
    expect(received.map((n) => n.settlementId)).toEqual([b!.settlementId]);
    const e = newNotification({ confirmation: PENDING });
    await deliver(e);
    await confirm(decided(e.settlementId));
    await confirm(decided(a!.settlementId));
    await received.atLeast(3);
    expect(received.map((n) => n.settlementId)).toEqual([b!.settlementId, e.settlementId, a!.settlementId]);
    expect(received.every((n) => n.confirmation.status === 'CONFIRMED')).toBe(true);
    // Each at its own position in the log of confirmations, in order.
    const positions = received.map((n) => n.confirmedAt);
    expect(positions.every((at, i) => i === 0 || comparePositions(positions[i - 1]!, at) < 0)).toBe(true);
  });

  test('with nobody following, moves to the newest confirmation without reading a notification', async () => {
    const { store, feed, deliver, confirm, reads } = await setUp();
    const [a, b] = [newNotification({ confirmation: PENDING }), newNotification({ confirmation: PENDING })];
    await deliver(a);
    await deliver(b);
    await confirm(decided(b.settlementId));
    await waitFor(async () => {
      const head = await store.confirmationLog.settledHead();
      return head.seq > 0 && comparePositions(feed.position, head) === 0 ? true : undefined;
    });
    await confirm(decided(a.settlementId));
    await waitFor(async () => (comparePositions(feed.position, await store.confirmationLog.settledHead()) === 0 ? true : undefined));
    expect(reads()).toBe(0);
  });

  test('hands out a notification stored already confirmed (an import) once told of it', async () => {
    const { deliver, feed, received, follow } = await setUp();
    follow();
    const imported = newNotification({ source: 'RECONCILED', confirmation: { ...decided('x'), status: 'CONFIRMED' } });
    await deliver(imported);
    feed.decided();
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
