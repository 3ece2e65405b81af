import type { Client, ExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { SLOW_SOCKET_CLOSE } from '../src/server/fanout/socket-connection.ts';
import type { NotificationStore } from '../src/store/types.ts';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { captureLogs } from './helpers/logs.ts';
import { scrapeSum, subscribersLive } from './helpers/metrics.ts';
import { withMethod } from './helpers/proxy.ts';
import { openRawSubscriber } from './helpers/raw-subscribers.ts';
import { openMemoryStore } from './helpers/stores.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { waitFor } from './helpers/wait.ts';

const SUBSCRIPTION = `subscription($account: String, $after: String) {
  incomingTransfer(accountNumber: $account, after: $after) { settlementId accountNumber transactionAmount cursor }
}`;

type Event = { settlementId: string; accountNumber: string; transactionAmount: string; cursor: string };

/** Subscribes and collects events; `next(n)` resolves once n events have arrived in total. */
function subscribe(client: Client, variables: Record<string, unknown> = {}) {
  const events: Event[] = [];
  const errors: unknown[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  const settle = () => {
    waiters = waiters.filter((w) => (events.length >= w.count ? (w.resolve(), false) : true));
  };
  const done = new Promise<void>((resolve) => {
    client.subscribe<{ incomingTransfer: Event }>(
      { query: SUBSCRIPTION, variables },
      {
        next: (result: ExecutionResult<{ incomingTransfer: Event }>) => {
          if (result.errors) errors.push(...result.errors);
          if (result.data) events.push(result.data.incomingTransfer);
          settle();
        },
        error: (error) => {
          errors.push(error);
          resolve();
        },
        complete: resolve,
      },
    );
  });
  return {
    events,
    errors,
    done,
    next: (count: number) =>
      new Promise<Event[]>((resolve) => {
        waiters.push({ count, resolve: () => resolve(events.slice(0, count)) });
        settle();
      }),
  };
}

const waiting = (app: TestApp) => scrapeSum(app, 'graphql_subscription_notifications_waiting');
const endedEarly = (app: TestApp) => scrapeSum(app, 'graphql_subscriptions_ended_early_total');
const isWarning = (entry: Record<string, unknown>) => (entry.level as number) >= 40;

/**
 * Stores `count` large notifications (16 kB each, so a socket's buffers fill in a few hundred) for
 * `account`, then resumes a subscriber from the first and stops it reading: the settlementIds of
 * what it is sent are kept.
 */
async function stalledResume(app: TestApp, count: number, account?: string) {
  const padded = () => notificationBody({ ...(account === undefined ? {} : { accountNumber: account }), padding: 'x'.repeat(16_000) });
  const stored = Array.from({ length: count }, padded);
  for (const body of stored) await app.deliver(body);
  const first = await app.query(`{ collectionNotification(settlementId: "${stored[0]!.settlementId}") { cursor } }`);
  const resuming = await openRawSubscriber(app.graphqlUrl, {
    query:
      'subscription($account: String, $after: String) { incomingTransfer(accountNumber: $account, after: $after) { settlementId rawBody } }',
    variables: { account, after: first.data!.collectionNotification.cursor },
    keep: (m) => ({ ...m, payload: m.payload?.data?.incomingTransfer?.settlementId }),
  });
  resuming.stall();
  return { stored, resuming, padded };
}

describe('incomingTransfer subscription', () => {
  it('hands a stored notification live to the subscribers of its account only', async () => {
    const app = await startApp();
    const mine = subscribe(app.wsClient(), { account: '0123456789' });
    const everyone = subscribe(app.wsClient());
    await subscribersLive(app, 2);

    const other = notificationBody({ accountNumber: '2233445566' });
    const own = notificationBody({ accountNumber: '0123456789', transactionAmount: '250000.50' });
    await app.deliver(other);
    await app.deliver(own);

    expect((await mine.next(1)).map((e) => e.settlementId)).toEqual([own.settlementId]);
    expect(mine.events[0]!.transactionAmount).toBe('250000.50');
    expect((await everyone.next(2)).map((e) => e.settlementId)).toEqual([other.settlementId, own.settlementId]);
  });

  it('publishes a duplicate delivery never, and a rejected one never', async () => {
    const app = await startApp();
    const sub = subscribe(app.wsClient());
    await subscribersLive(app, 1);
    const body = notificationBody();
    await app.deliver(body);
    await app.deliver(body);
    await app.deliver(notificationBody({ accountNumber: 'bad' }));
    const marker = notificationBody();
    await app.deliver(marker);
    expect((await sub.next(2)).map((e) => e.settlementId)).toEqual([body.settlementId, marker.settlementId]);
  });

  it('replays what was stored after a cursor, in order and filtered by account, then goes on live', async () => {
    const app = await startApp();
    const bodies = Array.from({ length: 5 }, (_, i) => notificationBody({ accountNumber: i === 2 ? '2233445566' : '0123456789' }));
    for (const body of bodies) await app.deliver(body);
    const { data } = await app.query('{ collectionNotification(settlementId: "' + bodies[0]!.settlementId + '") { cursor } }');

    const sub = subscribe(app.wsClient(), { account: '0123456789', after: data!.collectionNotification.cursor });
    const replayed = await sub.next(3);
    expect(replayed.map((e) => e.settlementId)).toEqual([bodies[1], bodies[3], bodies[4]].map((b) => b!.settlementId));

    const live = notificationBody();
    await app.deliver(live);
    expect((await sub.next(4))[3]!.settlementId).toBe(live.settlementId);
  });

  it('has no gap and no duplicate when deliveries race a replay longer than one page', async () => {
    // Two races, made deterministic by holding the replay's store queries once they have read (only
    // the replay filters by account: the replica's log reads, unfiltered, are never held):
    // - during the first page: those deliveries are stored (later pages read them) and handed out
    //   by the log (the subscriber buffers them), so only the replay's stop at the log's position
    //   keeps them from arriving twice;
    // - during the last page: they are in no page, so only the live buffer keeps them from a gap.
    const store = await openMemoryStore();
    const firstPageRead = Promise.withResolvers<void>();
    const lastPageRead = Promise.withResolvers<void>();
    const releaseFirst = Promise.withResolvers<void>();
    const releaseLast = Promise.withResolvers<void>();
    let queries = 0;
    const listAfter: NotificationStore['listAfter'] = async (query) => {
      const rows = await store.listAfter(query);
      if (query.accountNumber === undefined) return rows;
      queries += 1;
      if (queries === 1) {
        firstPageRead.resolve();
        await releaseFirst.promise;
      }
      if (rows.length < query.limit) {
        lastPageRead.resolve();
        await releaseLast.promise;
      }
      return rows;
    };
    const app = await startApp({}, { store: withMethod(store, 'listAfter', listAfter) });

    const account = '0123456789';
    const before = Array.from({ length: 420 }, () => notificationBody({ accountNumber: account }));
    for (const body of before) await app.deliver(body);
    const first = await app.query(`{ collectionNotification(settlementId: "${before[0]!.settlementId}") { cursor } }`);
    const sub = subscribe(app.wsClient(), { account, after: first.data!.collectionNotification.cursor });

    await firstPageRead.promise;
    const duringFirst = Array.from({ length: 30 }, () => notificationBody({ accountNumber: account }));
    await Promise.all(duringFirst.map((body) => app.deliver(body)));
    releaseFirst.resolve();

    await lastPageRead.promise;
    const duringLast = Array.from({ length: 20 }, () => notificationBody({ accountNumber: account }));
    await Promise.all(duringLast.map((body) => app.deliver(body)));
    releaseLast.resolve();

    const after = notificationBody({ accountNumber: account });
    await sub.next(419 + 30 + 20);
    await app.deliver(after);
    const ids = (await sub.next(419 + 30 + 20 + 1)).map((e) => e.settlementId);

    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(0, 419)).toEqual(before.slice(1).map((b) => b.settlementId));
    expect(new Set(ids.slice(419, 449))).toEqual(new Set(duringFirst.map((b) => b.settlementId)));
    expect(new Set(ids.slice(449, 469))).toEqual(new Set(duringLast.map((b) => b.settlementId)));
    expect(ids[469]).toBe(after.settlementId);
    expect(sub.errors).toEqual([]);
  });

  it('refuses a cursor it did not issue with BAD_USER_INPUT', async () => {
    const app = await startApp();
    const sub = subscribe(app.wsClient(), { after: 'bm90LW91cnM' });
    await sub.done;
    expect(JSON.stringify(sub.errors)).toContain('BAD_USER_INPUT');
  });

  it('refuses an account number that is not 10 digits with BAD_USER_INPUT', async () => {
    const app = await startApp();
    const sub = subscribe(app.wsClient(), { account: '12345' });
    await sub.done;
    expect(JSON.stringify(sub.errors)).toContain('BAD_USER_INPUT');
  });

  it('stops reading the store for a resuming subscriber that stopped reading, and closes it with 1013 at exactly the 1,001st notification waiting', async () => {
    const LIMIT = 1_000; // the documented limit (docs/http-api.md)
    const account = '0123456789';
    const store = await openMemoryStore();
    let replayRows = 0;
    // Only the replay filters by account: the log's reads are not counted.
    const listAfter: NotificationStore['listAfter'] = async (query) => {
      const rows = await store.listAfter(query);
      if (query.accountNumber !== undefined) replayRows += rows.length;
      return rows;
    };
    const { logger, logs, logged } = captureLogs();
    // Posted straight to the webhook, unknown to the sandbox bank: confirmation, off here, would log each NOT_AT_BANK.
    const app = await startApp({ COLLECTION_CONFIRMATION: 'off' }, { store: withMethod(store, 'listAfter', listAfter), logger });
    // Padded to 16 KB: the socket's buffers fill within a few hundred frames, well before the replay's end.
    const { stored, resuming, padded } = await stalledResume(app, 800, account);
    // Stalled: the rest of the page read last waits, and the replay reads no further.
    const page = await waitFor(async () => ((await waiting(app)) > 0 ? waiting(app) : undefined));
    const read = replayRows;
    expect(read).toBeLessThan(stored.length);

    // What arrives live waits behind the replay, against the same limit.
    for (let i = page; i < LIMIT; i += 25) await Promise.all(Array.from({ length: Math.min(25, LIMIT - i) }, () => app.deliver(padded())));
    await waitFor(async () => ((await waiting(app)) === LIMIT ? true : undefined));
    expect(await endedEarly(app)).toBe(0);
    await app.deliver(padded());
    await logged(isWarning);
    expect(await endedEarly(app)).toBe(1);
    expect(await waiting(app)).toBe(0);
    expect(replayRows).toBe(read);

    resuming.resume();
    const { code, reason } = await resuming.closed;
    expect({ code, reason }).toEqual(SLOW_SOCKET_CLOSE);
    // It got, in order, every row read for it but the page that waited.
    const received = resuming.nexts();
    expect(received).toEqual(stored.slice(1, 1 + received.length).map((b) => b.settlementId));
    expect(received.length + page).toBe(read);
    expect(logs.filter(isWarning)).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringContaining('ended early'), waiting: LIMIT + 1, ending: 'closed with 1013' }),
    ]);
  });

  it('logs no error when the connection of a stalled resuming subscriber drops with frames still being written', async () => {
    const { logger, logs } = captureLogs();
    // Posted straight to the webhook, unknown to the sandbox bank: confirmation, off here, would log each NOT_AT_BANK.
    const app = await startApp({ COLLECTION_CONFIRMATION: 'off' }, { logger });
    const { resuming } = await stalledResume(app, 600);
    await waitFor(async () => ((await waiting(app)) > 0 ? true : undefined));
    // The server's write to it is cancelled (write ECANCELED): the socket's end, not a fault.
    resuming.reset();
    await subscribersLive(app, 0);
    await resuming.closed;
    expect(logs.filter(isWarning)).toEqual([]);
  });

  it('closes a resuming subscriber that stopped reading with 1013 when it answers no keep-alive ping, though nothing new arrives', async () => {
    const { logger, logs, logged } = captureLogs();
    // Posted straight to the webhook, unknown to the sandbox bank: confirmation, off here, would log each NOT_AT_BANK.
    const app = await startApp({ SUBSCRIPTION_KEEPALIVE_MS: '200', COLLECTION_CONFIRMATION: 'off' }, { logger });
    const { stored, resuming } = await stalledResume(app, 600);
    await logged(isWarning);
    expect(await endedEarly(app)).toBe(1);
    expect(await waiting(app)).toBe(0);

    resuming.resume();
    const { code, reason } = await resuming.closed;
    expect({ code, reason }).toEqual(SLOW_SOCKET_CLOSE);
    const received = resuming.nexts();
    expect(received.length).toBeLessThan(stored.length - 1);
    expect(received).toEqual(stored.slice(1, 1 + received.length).map((b) => b.settlementId));
    expect(logs.filter(isWarning)).toEqual([
      expect.objectContaining({
        level: 40,
        msg: expect.stringContaining('ended early'),
        unansweredPing: { bufferedBytes: expect.any(Number) },
      }),
    ]);
  });

  it('cuts a connection that answers no ping with nothing on its way to it, as graphql-ws does, counting the subscriber it ends', async () => {
    const { logger, logs } = captureLogs();
    const app = await startApp({ SUBSCRIPTION_KEEPALIVE_MS: '200' }, { logger });
    // Connected, never subscribed: cut too, but it ended no subscriber.
    const idle = new WebSocket(app.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws', { autoPong: false });
    onCleanup(() => idle.terminate());
    // The server cuts it; a reset seen as an error instead of a close must not throw.
    idle.on('error', () => undefined);
    const idleClosed = new Promise<number>((resolve) => idle.once('close', (code) => resolve(code)));
    idle.once('open', () => idle.send(JSON.stringify({ type: 'connection_init' })));
    const gone = await openRawSubscriber(app.graphqlUrl, { query: SUBSCRIPTION }, { autoPong: false });
    const healthy = await openRawSubscriber(app.graphqlUrl, { query: SUBSCRIPTION });
    expect((await gone.closed).code).toBe(1006);
    expect(await idleClosed).toBe(1006);
    await subscribersLive(app, 1);
    expect(await endedEarly(app)).toBe(1);
    expect(logs.filter(isWarning)).toEqual([
      expect.objectContaining({ msg: expect.stringContaining('ended early'), ending: 'cut', unansweredPing: { bufferedBytes: 0 } }),
    ]);
    const body = notificationBody();
    await app.deliver(body);
    expect((await healthy.nexted(1))[0].data.incomingTransfer.settlementId).toBe(body.settlementId);
  });
});
