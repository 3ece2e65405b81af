/**
 * The notification feed on PostgreSQL while a transaction older than a committed notification stays open:
 * the notification is not settled, so nothing is handed out until that transaction ends.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification } from '../../test/helpers/notifications.ts';
import { databaseUrl, isolatedPostgresUrl, silent } from '../../test/helpers/stores.ts';
import { Inbox, waitFor } from '../../test/helpers/wait.ts';
import type { LogPosition } from '../domain/index.ts';
import { createMetrics } from '../metrics.ts';
import { createPubSub } from '../pubsub/index.ts';
import { createNotificationStore } from '../store/index.ts';
import { startNotificationFeed } from './notification-feed.ts';

describe.runIf(databaseUrl !== undefined)('the notification log on PostgreSQL, held back by an open transaction', () => {
  /**
   * A store with a follower listening, and a session of the test's own holding a transaction that
   * has written (holds an id) and stays open, as a slow migration would.
   */
  async function heldBack() {
    const storeUrl = await isolatedPostgresUrl(databaseUrl!);
    const store = await createNotificationStore(storeUrl, { logger: silent });
    onCleanup(() => store.close());
    const holder = new pg.Client({ connectionString: storeUrl });
    await holder.connect();
    onCleanup(() => holder.end());
    const pubsub = await createPubSub('memory:', { logger: silent, channelPrefix: 'test:' });
    onCleanup(() => pubsub.close());
    const metrics = createMetrics();
    const log = await startNotificationFeed({ store, pubsub, metrics, logger: silent });
    onCleanup(() => log.close());
    const positions = new Inbox<LogPosition>();
    log.follow((notification) => void positions.push(notification.position));
    await holder.query('BEGIN');
    await holder.query('SELECT pg_current_xact_id()');
    return { store, holder, pubsub, metrics, log, positions };
  }

  // How long the hold must last before a warning, and what the warning says: feed-shortfall.test.ts.
  // Here it lasts only as long as it must: the hold delays settling for every suite on this server.
  it('hands out nothing while an older transaction is open, retrying, and catches up soon after it ends', async () => {
    const { store, holder, metrics, log, positions } = await heldBack();
    const result = await store.insert(newNotification());
    if (result.status !== 'inserted') throw new Error('not inserted');
    const { position } = result.notification;
    log.announce(position, result.settled);
    const retried = async () =>
      (await metrics.logReads.get()).values.find((v) => v.labels.trigger === 'retry' && v.labels.outcome === 'ok')?.value ?? 0;
    // A retry that found it still unsettled.
    await waitFor(async () => ((await retried()) > 0 ? true : undefined));
    expect(positions).toEqual([]);

    await holder.query('COMMIT');
    await positions.atLeast(1);
    expect([...positions]).toEqual([position]);
  });

  it('learns from its own store, not from the message, that a commit is waiting to settle, and retries until it has', async () => {
    const { store, holder, pubsub, metrics, positions } = await heldBack();
    // Committed by another replica, which wakes this one with a message that names no position.
    const result = await store.insert(newNotification());
    if (result.status !== 'inserted') throw new Error('not inserted');
    await pubsub.publish('notificationsStored', { replica: 'another replica' });
    await waitFor(async () => {
      const { values } = await metrics.logReads.get();
      return values.some((v) => v.labels.trigger === 'retry') ? true : undefined;
    });
    expect(positions).toEqual([]);
    await holder.query('COMMIT');
    // No further message: its retries (or its timer) hand it out.
    await positions.atLeast(1);
    expect([...positions]).toEqual([result.notification.position]);
  });
});
