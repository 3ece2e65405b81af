// The fan-out: N graphql-ws subscribers on incomingTransfer (spread over the replicas), M notifications
// posted one after another, each timed from the webhook's 00 reply to its arrival at every
// subscriber; each subscriber's deliveries counted (none missed, none doubled, no stranger).
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createNotificationBodies, deliver } from './bank.ts';
import { GRAPHQL_PATH, fanoutAccount, incomingTransferSubscription } from './graphql.ts';
import { createLatencyRecorder } from './latency.ts';
import { tally, type LoadJob, type ScenarioResult } from './protocol.ts';

/** Sockets opened at once: a burst of thousands would only measure the accept backlog. */
const CONNECT_BATCH = 100;
/** How long one event may take to reach everyone before the next is posted anyway. */
const EVENT_TIMEOUT_MS = 10_000;
/** A pause after the last event, so a late duplicate is still seen. */
const SETTLE_MS = 250;
/** Unmeasured events first (when --warmup is not 0), so the delivery path is warm. */
const WARMUP_EVENTS = 5;

interface Subscriber {
  client: Client;
  /** settlementId → how many times it arrived. */
  seen: Map<string, number>;
  /** What went wrong with its subscription (an error, an early end). */
  problem: string | undefined;
}

interface Posted {
  /** When the webhook's 00 was read; arrivals before it count as 0 ms. */
  repliedAt: number | undefined;
  measured: boolean;
  reached: number;
  early: number;
  done(): void;
}

/** Runs the fan-out; `awaitLive` asks the orchestrator to wait until the servers count the subscribers live. */
export async function runFanout(
  job: LoadJob,
  awaitLive: (count: number) => Promise<{ live: boolean; active: number }>,
  onMeasuring: () => void,
): Promise<ScenarioResult> {
  const posted = new Map<string, Posted>();
  const latency = createLatencyRecorder();
  const outcomes: Record<string, number> = {};
  let lastArrival = 0;
  const onDelivery = (subscriber: Subscriber, settlementId: string) => {
    const times = (subscriber.seen.get(settlementId) ?? 0) + 1;
    subscriber.seen.set(settlementId, times);
    const event = posted.get(settlementId);
    // Duplicates and strangers are counted at the end, from `seen`.
    if (!event || times > 1) return;
    event.reached += 1;
    if (event.measured) {
      if (event.repliedAt === undefined) event.early += 1;
      else latency.record(performance.now() - event.repliedAt);
      lastArrival = performance.now();
    }
    if (event.reached === job.subscribers) event.done();
  };
  const account = fanoutAccount();
  const subscribers = await openSubscribers(job, account, onDelivery);
  try {
    const { live, active } = await awaitLive(job.subscribers);
    if (!live) throw new Error(`only ${active} of ${job.subscribers} subscriptions became live`);
    const next = createNotificationBodies(account);
    const post = async (count: number, measured: boolean) => {
      for (let i = 0; i < count; i += 1) {
        const { settlementId, body } = next();
        const reached = new Promise<void>((done) =>
          posted.set(settlementId, { repliedAt: undefined, measured, reached: 0, early: 0, done }),
        );
        const outcome = await deliver(job.baseUrl, body).catch((error: Error) => `failed (${error.message})`);
        tally(outcomes, `post ${outcome}`);
        // Only a 00 is published: anything else is an error already and expects no delivery.
        if (outcome !== '00') posted.delete(settlementId);
        const event = posted.get(settlementId);
        if (!event) continue;
        event.repliedAt = performance.now();
        for (let e = 0; e < event.early; e += 1) latency.record(0);
        if (event.early > 0) tally(outcomes, 'arrived before the reply (0 ms)', event.early);
        let timer: NodeJS.Timeout | undefined;
        // A missed delivery is counted at the end; after the time-out the next event goes anyway.
        await Promise.race([reached, new Promise((resolve) => (timer = setTimeout(resolve, EVENT_TIMEOUT_MS)))]);
        clearTimeout(timer);
      }
    };
    const warmup = job.warmupS > 0 ? WARMUP_EVENTS : 0;
    await post(warmup, false);
    onMeasuring();
    const started = performance.now();
    await post(job.events, true);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const seconds = Math.max(lastArrival - started, 1) / 1000;
    return {
      scenario: 'fanout',
      load: `${job.subscribers} subs × ${job.events} events${job.baseUrls.length > 1 ? ` on ${job.baseUrls.length}` : ''}`,
      count: latency.count,
      seconds,
      perSecond: latency.count / seconds,
      latencyMs: latency.summary(),
      errors: countDeliveries(subscribers, [...posted.keys()], outcomes),
      outcomes,
    };
  } finally {
    // Problems while closing are ours, not the server's.
    for (const subscriber of subscribers) subscriber.problem ??= '';
    await Promise.all(subscribers.map(async (subscriber) => subscriber.client.dispose()));
  }
}

/** Tallies delivered, missing, duplicate and unexpected deliveries and failed subscribers; answers the errors. */
function countDeliveries(subscribers: Subscriber[], posted: string[], outcomes: Record<string, number>): number {
  const ids = new Set(posted);
  for (const subscriber of subscribers) {
    for (const settlementId of posted) {
      const times = subscriber.seen.get(settlementId) ?? 0;
      tally(outcomes, times === 0 ? 'missing' : 'delivered');
      if (times > 1) tally(outcomes, 'duplicate', times - 1);
    }
    for (const [settlementId, times] of subscriber.seen) if (!ids.has(settlementId)) tally(outcomes, 'unexpected', times);
    if (subscriber.problem) tally(outcomes, `subscriber ${subscriber.problem}`);
  }
  return Object.entries(outcomes).reduce(
    (sum, [key, n]) => (key === 'delivered' || key === 'post 00' || key.startsWith('arrived') ? sum : sum + n),
    0,
  );
}

/** Opens the subscribers, CONNECT_BATCH at a time, round-robin over the servers; each resolved once acknowledged. */
async function openSubscribers(
  job: LoadJob,
  account: string,
  onDelivery: (subscriber: Subscriber, settlementId: string) => void,
): Promise<Subscriber[]> {
  const urls = job.baseUrls.map((baseUrl) => `${baseUrl.replace(/^http/, 'ws')}${GRAPHQL_PATH}`);
  const subscribers: Subscriber[] = [];
  try {
    while (subscribers.length < job.subscribers) {
      const first = subscribers.length;
      const batch = Array.from({ length: Math.min(CONNECT_BATCH, job.subscribers - first) }, (_, i) =>
        openSubscriber(urls[(first + i) % urls.length]!, account, onDelivery),
      );
      const opened = await Promise.allSettled(batch);
      for (const result of opened) if (result.status === 'fulfilled') subscribers.push(result.value);
      const failed = opened.find((result) => result.status === 'rejected');
      if (failed) throw new Error(`a subscriber could not connect: ${String(failed.reason)}`);
    }
    return subscribers;
  } catch (error) {
    await Promise.all(subscribers.map(async (subscriber) => subscriber.client.dispose()));
    throw error;
  }
}

function openSubscriber(
  url: string,
  account: string,
  onDelivery: (subscriber: Subscriber, settlementId: string) => void,
): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const client = createClient({
      url,
      webSocketImpl: WebSocket,
      lazy: false,
      retryAttempts: 0,
      connectionAckWaitTimeout: 10_000,
      on: {
        connected: () => resolve(subscriber),
        closed: (event) => reject(new Error(`closed before acknowledgement (${(event as { code?: number }).code ?? 'no code'})`)),
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
        error: (error) => void (subscriber.problem ??= `failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`),
        complete: () => void (subscriber.problem ??= 'ended early'),
      },
    );
  });
}
