/**
 * Many subscribers resuming from far back whose clients then stop reading: what waits for them stays
 * bounded (a replay reads the store a page at a time, only as its socket takes the last one), and
 * each is closed with 1013 once more notifications arrive than may wait for it (docs/http-api.md,
 * "Slow subscribers").
 */
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { scrapeSum, subscribersLive } from './helpers/metrics.ts';
import { openRawSubscribers } from './helpers/raw-subscribers.ts';
import { waitFor } from './helpers/wait.ts';

const SUBSCRIBERS = 10;
/** 16 KB each: a socket's buffers fill within a few hundred, well before the replay's end. */
const STORED = 1_000;
/** The documented page of a replay, and the most that may wait for one subscription. */
const PAGE = 50;
const LIMIT = 1_000;

const waiting = (app: TestApp) => scrapeSum(app, 'graphql_subscription_notifications_waiting');
const replayed = (app: TestApp) => scrapeSum(app, 'graphql_subscription_events_total', { source: 'replay' });

/** Delivers the bodies, `at` at a time; each must be stored. */
async function deliverAll(app: TestApp, bodies: Record<string, unknown>[], at = 25): Promise<void> {
  for (let start = 0; start < bodies.length; start += at) {
    const replies = await Promise.all(bodies.slice(start, start + at).map((body) => app.deliver(body)));
    expect(replies.map((r) => r.reply.responseCode)).toEqual(replies.map(() => '00'));
  }
}

describe('stalled resuming subscribers', () => {
  it(`hold at most a page each while stalled, and are all closed with 1013 once ${LIMIT + 1} more notifications arrive`, async () => {
    const app = await startApp();
    const stored = Array.from({ length: STORED }, () => notificationBody({ padding: 'x'.repeat(16_000) }));
    await deliverAll(app, stored);
    const first = await app.query(`{ collectionNotification(settlementId: "${stored[0]!.settlementId}") { cursor } }`);
    const subscribers = await openRawSubscribers(app.graphqlUrl, SUBSCRIBERS, () => ({
      query: 'subscription($after: String) { incomingTransfer(after: $after) { settlementId rawBody } }',
      variables: { after: first.data!.collectionNotification.cursor },
      keep: (message) => ({ type: message.type }),
    }));
    for (const subscriber of subscribers) subscriber.stall();
    await subscribersLive(app, SUBSCRIBERS, 30_000);

    // At rest: their sockets take nothing more, so their replays read nothing more.
    let last = -1;
    await waitFor(async () => {
      const now = await replayed(app);
      if (now === last) return true;
      last = now;
      await new Promise((resolve) => setTimeout(resolve, 500));
      return undefined;
    }, 60_000);
    expect(last).toBeGreaterThan(SUBSCRIBERS);
    expect(last).toBeLessThan(SUBSCRIBERS * (STORED - 1));
    expect(await waiting(app)).toBeLessThanOrEqual(SUBSCRIBERS * PAGE);

    await deliverAll(
      app,
      Array.from({ length: LIMIT + 1 }, () => notificationBody()),
    );
    for (const subscriber of subscribers) subscriber.resume();
    const closes = await Promise.all(subscribers.map((subscriber) => subscriber.closed));
    expect(closes.map((close) => close.code)).toEqual(subscribers.map(() => 1013));
    expect(await scrapeSum(app, 'graphql_subscriptions_ended_early_total')).toBe(SUBSCRIBERS);
    await waitFor(async () => ((await waiting(app)) === 0 ? true : undefined));
  }, 120_000);
});
