import { describe, expect, it } from 'vitest';
import { SLOW_SOCKET_CLOSE } from '../src/server/fanout/socket-connection.ts';
import type { CollectionStore, NotificationStore } from '../src/store/types.ts';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { captureLogs } from './helpers/logs.ts';
import { scrapeSum, subscribersLive } from './helpers/metrics.ts';
import { withMethod } from './helpers/proxy.ts';
import { openRawSubscriber, openRawSubscribers, type RawSubscriber } from './helpers/raw-subscribers.ts';
import { openMemoryStore } from './helpers/stores.ts';

const ALL = 'subscription All { incomingTransfer { settlementId accountNumber } }';
const BY_ACCOUNT = `subscription ByAccount($account: String) {
  incomingTransfer(accountNumber: $account) { settlementId transactionAmount }
}`;
const AMOUNTS = 'subscription Amounts { incomingTransfer { settlementId settledAmount } }';
const ACCOUNT_A = '0123456789';
const ACCOUNT_B = '2233445566';

const executions = (app: TestApp, execution: 'shared' | 'individual') =>
  scrapeSum(app, 'graphql_subscription_executions_total', { execution });
const liveEvents = (app: TestApp) => scrapeSum(app, 'graphql_subscription_events_total', { source: 'live' });
const endedEarly = (app: TestApp) => scrapeSum(app, 'graphql_subscriptions_ended_early_total');

/** The documented limit (docs/http-api.md): notifications that may wait for one subscriber. */
const LIMIT = 1_000;
/** A large selection, recorded as its settlementId only: notifications padded to 16 KB fill a socket's buffers in a few hundred frames. */
const LARGE = {
  query: 'subscription Large { incomingTransfer { settlementId rawBody } }',
  keep: (m: { type: string; id?: string; payload?: any }) => ({ ...m, payload: m.payload?.data?.incomingTransfer?.settlementId }),
};
const padded = () => notificationBody({ padding: 'x'.repeat(16_000) });
const waiting = (app: TestApp) => scrapeSum(app, 'graphql_subscription_notifications_waiting');

/** Delivers padded notifications, 25 at a time, each call resolving once `readers` have all of them. */
function deliverer(app: TestApp, readers: RawSubscriber[]) {
  let sent = 0;
  const deliver = async (count: number) => {
    for (let done = 0; done < count; done += 25) {
      const replies = await Promise.all(Array.from({ length: Math.min(25, count - done) }, () => app.deliver(padded())));
      expect(replies.map((r) => r.reply.responseCode)).toEqual(replies.map(() => '00'));
    }
    sent += count;
    await Promise.all(readers.map((reader) => reader.nexted(sent)));
  };
  return Object.assign(deliver, { sent: () => sent });
}

/** A store that keeps `settledAmount` unreadable (not a decimal) for the settlementIds in `corrupt`. */
async function storeCorrupting(corrupt: Set<string>): Promise<CollectionStore> {
  const store = await openMemoryStore();
  const insert: NotificationStore['insert'] = (notification) =>
    store.insert(corrupt.has(notification.settlementId) ? { ...notification, settledAmount: '1,489.25' } : notification);
  return withMethod(store, 'insert', insert);
}

describe('incomingTransfer fan-out over WebSocket', () => {
  it('gives 1,000 subscribers of 4 distinct operations their own masked payloads once, from one execution per operation', async () => {
    const corrupt = new Set<string>();
    const app = await startApp({}, { store: await storeCorrupting(corrupt) });
    const kinds = [
      { query: ALL, variables: {} },
      { query: BY_ACCOUNT, variables: { account: ACCOUNT_A } },
      { query: BY_ACCOUNT, variables: { account: ACCOUNT_B } },
      { query: AMOUNTS, variables: {} },
    ];
    const subscribers = await openRawSubscribers(app.graphqlUrl, 1000, (i) => ({ ...kinds[i % 4]!, id: `sub-${i}` }));
    await subscribersLive(app, 1000, 15_000);

    const bodies = [
      notificationBody({ accountNumber: ACCOUNT_A, transactionAmount: '1500.00' }),
      notificationBody({ accountNumber: ACCOUNT_B, transactionAmount: '250000.50' }),
      notificationBody({ accountNumber: ACCOUNT_A, transactionAmount: '75.25' }),
      notificationBody({ accountNumber: ACCOUNT_B, transactionAmount: '10.00' }),
    ];
    corrupt.add(String(bodies[2]!.settlementId));
    for (const body of bodies) expect((await app.deliver(body)).reply.responseCode).toBe('00');

    const [n1, n2, n3, n4] = bodies.map((b) => ({
      settlementId: String(b.settlementId),
      accountNumber: String(b.accountNumber),
      transactionAmount: String(b.transactionAmount),
    }));
    const amount = (n: typeof n1) => ({ data: { incomingTransfer: { settlementId: n!.settlementId, settledAmount: '1489.25' } } });
    const expected = [
      [n1, n2, n3, n4].map((n) => ({ data: { incomingTransfer: { settlementId: n!.settlementId, accountNumber: n!.accountNumber } } })),
      [n1, n3].map((n) => ({ data: { incomingTransfer: { settlementId: n!.settlementId, transactionAmount: n!.transactionAmount } } })),
      [n2, n4].map((n) => ({ data: { incomingTransfer: { settlementId: n!.settlementId, transactionAmount: n!.transactionAmount } } })),
      [
        amount(n1),
        amount(n2),
        {
          data: { incomingTransfer: { settlementId: n3!.settlementId, settledAmount: null } },
          errors: [
            {
              message: 'Internal server error.',
              locations: expect.any(Array),
              path: ['incomingTransfer', 'settledAmount'],
              extensions: { code: 'INTERNAL_SERVER_ERROR' },
            },
          ],
        },
        amount(n4),
      ],
    ];
    await Promise.all(subscribers.map((subscriber, i) => subscriber.nexted(expected[i % 4]!.length)));

    subscribers.forEach((subscriber, i) => {
      expect(subscriber.messages.every((m) => m.type === 'next' && m.id === subscriber.id)).toBe(true);
      expect(subscriber.nexts()).toEqual(expected[i % 4]);
    });
    // One execution per operation and notification it matched, however many subscribers share it.
    expect(await executions(app, 'shared')).toBe(4 + 2 + 2 + 4);
    expect(await executions(app, 'individual')).toBe(0);
    // Events count per subscriber reached.
    expect(await liveEvents(app)).toBe(250 * (4 + 2 + 2 + 4));

    // The last member out of each execution ends it: nothing stays subscribed.
    for (const subscriber of subscribers) subscriber.socket.close();
    await subscribersLive(app, 0, 15_000);
  });

  it('stops writing to a subscriber that completes, keeps the others, and lets a late one join', async () => {
    const app = await startApp();
    const [first, second] = await openRawSubscribers(app.graphqlUrl, 2, () => ({ query: ALL }));
    await subscribersLive(app, 2);
    const n1 = notificationBody();
    await app.deliver(n1);
    await Promise.all([first!.nexted(1), second!.nexted(1)]);

    first!.socket.send(JSON.stringify({ id: first!.id, type: 'complete' }));
    await subscribersLive(app, 1);
    const late = await openRawSubscriber(app.graphqlUrl, { query: ALL });
    await subscribersLive(app, 2);
    const n2 = notificationBody();
    await app.deliver(n2);

    const ids = (s: RawSubscriber) => s.nexts().map((p) => p.data.incomingTransfer.settlementId);
    await Promise.all([second!.nexted(2), late.nexted(1)]);
    expect(ids(second!)).toEqual([n1.settlementId, n2.settlementId]);
    expect(ids(late)).toEqual([n2.settlementId]);
    // Two events of n1, two of n2: none went to the subscriber that completed.
    expect(await liveEvents(app)).toBe(4);
    expect(ids(first!)).toEqual([n1.settlementId]);
  });

  it('runs each subscriber resuming with after on its own, beside a shared live one', async () => {
    const app = await startApp();
    const [n0, n1] = [notificationBody(), notificationBody()];
    for (const body of [n0, n1]) await app.deliver(body);
    const { data } = await app.query(`{ collectionNotification(settlementId: "${n0.settlementId}") { cursor } }`);
    const resume = {
      query: 'subscription($after: String) { incomingTransfer(after: $after) { settlementId } }',
      variables: { after: data!.collectionNotification.cursor },
    };
    const resumed = await openRawSubscribers(app.graphqlUrl, 2, () => resume);
    const live = await openRawSubscribers(app.graphqlUrl, 2, () => ({ query: resume.query }));
    await subscribersLive(app, 4);
    const n2 = notificationBody();
    await app.deliver(n2);

    const ids = (s: RawSubscriber) => s.nexts().map((p) => p.data.incomingTransfer.settlementId);
    await Promise.all([...resumed.map((s) => s.nexted(2)), ...live.map((s) => s.nexted(1))]);
    for (const s of resumed) expect(ids(s)).toEqual([n1.settlementId, n2.settlementId]);
    for (const s of live) expect(ids(s)).toEqual([n2.settlementId]);
    expect(await executions(app, 'individual')).toBe(2 * 2);
    expect(await executions(app, 'shared')).toBe(1);
  });

  it('closes a socket that stopped reading with 1013 at exactly the 1,001st notification waiting for it, while the others receive every event', async () => {
    const { logger, logs, logged } = captureLogs();
    // Posted straight to the webhook, unknown to the sandbox bank: confirmation, off here, would log each NOT_AT_BANK.
    const app = await startApp({ COLLECTION_CONFIRMATION: 'off' }, { logger });
    const healthy = await openRawSubscribers(app.graphqlUrl, 3, (i) => ({ ...LARGE, id: `healthy-${i}` }));
    const stalled = await openRawSubscriber(app.graphqlUrl, { ...LARGE, id: 'stalled' });
    await subscribersLive(app, 4);
    stalled.stall();
    const deliver = deliverer(app, healthy);

    // The kernel's buffers take the first frames (a few MiB); from then on notifications wait for the socket.
    while ((await waiting(app)) === 0) {
      expect(deliver.sent()).toBeLessThan(2_000);
      await deliver(20);
    }
    await deliver(LIMIT - (await waiting(app)));
    expect(await waiting(app)).toBe(LIMIT);
    expect(await endedEarly(app)).toBe(0);

    await deliver(1);
    await logged((entry) => (entry.level as number) >= 40);
    expect(await endedEarly(app)).toBe(1);
    // What waited is dropped at once: the client resumes from its last cursor.
    expect(await waiting(app)).toBe(0);

    // Reading again, the stalled client finds what its socket took before the close, then the close.
    stalled.resume();
    const { code, reason } = await stalled.closed;
    expect({ code, reason }).toEqual(SLOW_SOCKET_CLOSE);
    const received = stalled.nexts();
    expect(received).toEqual(healthy[0]!.nexts().slice(0, received.length));
    expect(received.length + LIMIT + 1).toBe(deliver.sent());
    for (const subscriber of healthy) expect(subscriber.nexts()).toEqual(healthy[0]!.nexts());
    await subscribersLive(app, 3);
    expect(logs.filter((entry) => (entry.level as number) >= 40)).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringContaining('ended early'), waiting: LIMIT + 1, ending: 'closed with 1013' }),
    ]);
  });
});
