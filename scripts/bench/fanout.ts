// The fan-out scenario: N graphql-ws subscribers on incomingTransfer (spread over the replicas),
// M notifications posted one after another, and the time from each webhook's 00 reply to the
// notification's arrival at every subscriber, each subscriber's deliveries counted (none missed,
// none doubled).
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createNotificationBodies, deliver } from './bank.ts';
import { GRAPHQL_PATH, fanoutAccount, incomingTransferSubscription } from './graphql.ts';
import { createLatencyRecorder } from './latency.ts';
import { tally, type LoadJob, type ScenarioResult } from './protocol.ts';

/** Sockets opened at once: a burst of thousands would only measure the accept backlog. */
const CONNECT_BATCH = 100;
/** A progress line per this many subscribers connected, for the large runs. */
const PROGRESS_EVERY = 2_000;
/** How long one event may take to reach every subscriber before the next is posted anyway. */
const EVENT_TIMEOUT_MS = 10_000;
/** A pause after the last event, so a late duplicate is still seen. */
const SETTLE_MS = 250;
/** Events posted before measuring (when --warmup is not 0), so the JIT has seen the delivery path. */
const WARMUP_EVENTS = 5;

interface Subscriber {
  client: Client;
  /** settlementId → how many times it arrived. */
  seen: Map<string, number>;
  /** What went wrong with this subscription, if anything (an error, an early end). */
  problem: string | undefined;
}

interface PostedEvent {
  /** When the webhook's 00 reply was read; undefined until then. */
  repliedAt: number | undefined;
  /** Measured first arrivals seen before the reply was read (a delivery can beat it): counted as 0 ms. */
  early: number;
  /** False for warm-up events: checked for exactly-once delivery, left out of the figures. */
  measured: boolean;
  /** Subscribers it has reached (each counted once). */
  reached: number;
  /** Called when it has reached every subscriber. */
  done: () => void;
}

type Tracker = ReturnType<typeof createTracker>;

/** What was posted and what arrived where; times the first arrival of each measured event at each subscriber. */
function createTracker(subscriberCount: number) {
  const posted = new Map<string, PostedEvent>();
  const latency = createLatencyRecorder();
  let lastArrival = 0;
  let early = 0;
  return {
    posted,
    latency,
    lastArrival: () => lastArrival,
    early: () => early,
    /** Registers an event before its POST (a delivery may beat the webhook's reply); resolves once it reached everyone. */
    expect(settlementId: string, measured: boolean): Promise<void> {
      return new Promise((done) => posted.set(settlementId, { repliedAt: undefined, early: 0, measured, reached: 0, done }));
    },
    /** The webhook answered 00 for the event: arrivals from now are timed from here. */
    onReply(settlementId: string): void {
      const event = posted.get(settlementId);
      if (!event) return;
      event.repliedAt = performance.now();
      for (let i = 0; i < event.early; i += 1) latency.record(0);
      early += event.early;
    },
    onDelivery(subscriber: Subscriber, settlementId: string): void {
      const at = performance.now();
      const times = (subscriber.seen.get(settlementId) ?? 0) + 1;
      subscriber.seen.set(settlementId, times);
      const event = posted.get(settlementId);
      // Duplicates and strangers are counted at the end, from `seen`; only first arrivals count here.
      if (!event || times > 1) return;
      event.reached += 1;
      if (event.measured) {
        if (event.repliedAt === undefined) event.early += 1;
        else latency.record(at - event.repliedAt);
        lastArrival = at;
      }
      if (event.reached === subscriberCount) event.done();
    },
  };
}

/** Runs the fan-out; `awaitLive` asks the server side to wait for its subscription gauge. */
export async function runFanout(
  job: LoadJob,
  awaitLive: (count: number) => Promise<{ live: boolean; active: number }>,
  onMeasuring: () => void,
): Promise<ScenarioResult> {
  const tracker = createTracker(job.subscribers);
  const outcomes: Record<string, number> = {};
  const wsUrls = job.baseUrls.map((baseUrl) => `${baseUrl.replace(/^http/, 'ws')}${GRAPHQL_PATH}`);
  const account = fanoutAccount();
  const subscribers = await openSubscribers(wsUrls, job.subscribers, account, tracker.onDelivery);
  try {
    const { live, active } = await awaitLive(job.subscribers);
    if (!live) throw new Error(`only ${active} of ${job.subscribers} subscriptions became live`);
    const post = postEvents(job.baseUrl, account, tracker, outcomes);
    const warmupEvents = job.warmupS > 0 ? WARMUP_EVENTS : 0;
    await post(warmupEvents, false);
    onMeasuring();
    const firstStart = performance.now();
    await post(job.events, true);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

    const errors = countDeliveries(subscribers, tracker.posted, outcomes);
    if (tracker.early() > 0) tally(outcomes, 'arrived before the reply (0 ms)', tracker.early());
    const seconds = Math.max(tracker.lastArrival() - firstStart, 1) / 1000;
    const postsNot2xx = Object.entries(outcomes).filter(([key]) => key.startsWith('post http'));
    return {
      scenario: 'fanout',
      load: `${job.subscribers} subs × ${job.events} events${warmupEvents ? ` (+${warmupEvents})` : ''}${job.baseUrls.length > 1 ? ` on ${job.baseUrls.length}` : ''}`,
      count: tracker.latency.count,
      seconds,
      perSecond: tracker.latency.count / seconds,
      latencyMs: tracker.latency.summary(),
      non2xx: postsNot2xx.reduce((sum, [, n]) => sum + n, 0),
      errors,
      outcomes,
    };
  } finally {
    await closeSubscribers(subscribers);
  }
}

/** A poster of `count` events, one after another, each waiting until it has reached every subscriber. */
function postEvents(baseUrl: string, account: string, tracker: Tracker, outcomes: Record<string, number>) {
  const nextNotification = createNotificationBodies(account);
  return async (count: number, measured: boolean): Promise<void> => {
    for (let i = 0; i < count; i += 1) {
      const { settlementId, body } = nextNotification();
      const reachedAll = tracker.expect(settlementId, measured);
      const outcome = await deliver(baseUrl, body).catch((error: Error) => `failed (${error.message})`);
      tally(outcomes, `post ${outcome}`);
      // Only a 00 is published; anything else is already an error and expects no delivery.
      if (outcome !== '00') {
        tracker.posted.delete(settlementId);
        continue;
      }
      tracker.onReply(settlementId);
      let timer: NodeJS.Timeout | undefined;
      // Missing deliveries are counted at the end; after the time-out the next event goes anyway.
      await Promise.race([reachedAll, new Promise((resolve) => (timer = setTimeout(resolve, EVENT_TIMEOUT_MS)))]);
      clearTimeout(timer);
    }
  };
}

/**
 * Checks that every subscriber got every posted event exactly once; tallies delivered, missing,
 * duplicate and unexpected deliveries, and subscribers that failed. Returns the number of errors.
 */
function countDeliveries(subscribers: Subscriber[], posted: Map<string, PostedEvent>, outcomes: Record<string, number>): number {
  let delivered = 0;
  let missing = 0;
  let duplicate = 0;
  let unexpected = 0;
  for (const subscriber of subscribers) {
    for (const settlementId of posted.keys()) {
      const times = subscriber.seen.get(settlementId) ?? 0;
      if (times === 0) missing += 1;
      else delivered += 1;
      duplicate += Math.max(times - 1, 0);
    }
    for (const [settlementId, times] of subscriber.seen) if (!posted.has(settlementId)) unexpected += times;
    if (subscriber.problem) tally(outcomes, `subscriber ${subscriber.problem}`);
  }
  tally(outcomes, 'delivered', delivered);
  if (missing) tally(outcomes, 'missing', missing);
  if (duplicate) tally(outcomes, 'duplicate', duplicate);
  if (unexpected) tally(outcomes, 'unexpected', unexpected);
  const failedPosts = Object.entries(outcomes).filter(([key]) => key.startsWith('post ') && key !== 'post 00');
  const failedSubscribers = subscribers.filter((subscriber) => subscriber.problem).length;
  return missing + duplicate + unexpected + failedSubscribers + failedPosts.reduce((sum, [, n]) => sum + n, 0);
}

/**
 * Opens `count` subscribers, CONNECT_BATCH at a time, round-robin over `wsUrls`; resolves once every
 * socket is acknowledged. Large runs print a progress line now and then.
 */
async function openSubscribers(wsUrls: string[], count: number, account: string, onDelivery: (subscriber: Subscriber, settlementId: string) => void) {
  const subscribers: Subscriber[] = [];
  const started = performance.now();
  try {
    while (subscribers.length < count) {
      const batch = Math.min(CONNECT_BATCH, count - subscribers.length);
      const first = subscribers.length;
      const opened = await Promise.allSettled(
        Array.from({ length: batch }, (_, i) => openSubscriber(wsUrls[(first + i) % wsUrls.length]!, account, onDelivery)),
      );
      for (const result of opened) if (result.status === 'fulfilled') subscribers.push(result.value);
      const failed = opened.find((result) => result.status === 'rejected');
      if (failed) throw new Error(`a subscriber could not connect: ${String(failed.reason)}`);
      if (count >= PROGRESS_EVERY * 2 && (subscribers.length % PROGRESS_EVERY === 0 || subscribers.length === count)) {
        process.stderr.write(`    ${subscribers.length} of ${count} subscribers connected (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
      }
    }
    return subscribers;
  } catch (error) {
    await closeSubscribers(subscribers);
    throw error;
  }
}

/** One graphql-ws client with one incomingTransfer subscription; resolves once the server acknowledged it. */
function openSubscriber(wsUrl: string, account: string, onDelivery: (subscriber: Subscriber, settlementId: string) => void): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    let connected = false;
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      lazy: false,
      retryAttempts: 0,
      connectionAckWaitTimeout: 10_000,
      on: {
        connected: () => {
          connected = true;
          resolve(subscriber);
        },
        closed: (event) => {
          if (!connected) reject(new Error(`closed before acknowledgement (${(event as { code?: number }).code ?? 'no code'})`));
        },
      },
    });
    const subscriber: Subscriber = { client, seen: new Map(), problem: undefined };
    client.subscribe<{ incomingTransfer?: { settlementId?: unknown } }>(
      { query: incomingTransferSubscription(account) },
      {
        next: (result) => {
          const settlementId = result.data?.incomingTransfer?.settlementId;
          if (typeof settlementId === 'string') onDelivery(subscriber, settlementId);
          else subscriber.problem ??= `got ${result.errors?.[0]?.message ?? 'a delivery without data'}`;
        },
        error: (error) => {
          subscriber.problem ??= `failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`;
        },
        complete: () => {
          subscriber.problem ??= 'ended early';
        },
      },
    );
  });
}

async function closeSubscribers(subscribers: Subscriber[]): Promise<void> {
  // Problems reported while closing are ours, not the server's: stop recording first.
  for (const subscriber of subscribers) subscriber.problem ??= '';
  await Promise.all(subscribers.map((subscriber) => subscriber.client.dispose()));
}
