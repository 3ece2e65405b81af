// The time from a webhook's 00 to the notification's arrival on incomingTransfer(confirmed: true):
// one graphql-ws subscriber, notifications posted at a fixed rate, each timed from its 00 reply to
// its arrival (the bank asked, its answer recorded, the confirmed feed moved on); each counted
// (none missed, none doubled).
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createNotificationBodies, deliver } from './bank.ts';
import { GRAPHQL_PATH } from './graphql.ts';
import { createLatencyRecorder } from './latency.ts';
import { tally, type LoadJob, type ScenarioResult } from './protocol.ts';

const SUBSCRIPTION = 'subscription { incomingTransfer(confirmed: true) { settlementId } }';
/** How long the last notifications may take to arrive once the posting is over. */
const ARRIVAL_TIMEOUT_MS = 60_000;

interface Posted {
  repliedAt: number | undefined;
  arrivals: number;
  measured: boolean;
}

/** Posts at `job.rate` for warm-up + duration seconds; only what is posted after the warm-up is timed. */
export async function runConfirmedLatency(job: LoadJob, onMeasuring: () => void): Promise<ScenarioResult> {
  const rate = job.rate ?? 100;
  const posted = new Map<string, Posted>();
  const latency = createLatencyRecorder();
  const outcomes: Record<string, number> = {};
  let arrived = Promise.withResolvers<void>();
  let strangers = 0;
  const client = createClient({
    url: `${job.baseUrl.replace(/^http/, 'ws')}${GRAPHQL_PATH}`,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
  });
  let problem: string | undefined;
  client.subscribe<{ incomingTransfer?: { settlementId?: unknown } }>(
    { query: SUBSCRIPTION },
    {
      next: (result) => {
        const id = result.data?.incomingTransfer?.settlementId;
        const event = typeof id === 'string' ? posted.get(id) : undefined;
        if (!event) return void (strangers += 1);
        event.arrivals += 1;
        if (event.arrivals === 1 && event.measured && event.repliedAt !== undefined) latency.record(performance.now() - event.repliedAt);
        arrived.resolve();
      },
      error: (error) => void (problem ??= `failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`),
      complete: () => void (problem ??= 'ended early'),
    },
  );
  const next = createNotificationBodies();
  const post = async (measured: boolean) => {
    const { settlementId, body } = next();
    const event: Posted = { repliedAt: undefined, arrivals: 0, measured };
    posted.set(settlementId, event);
    const outcome = await deliver(job.baseUrl, body).catch((error: Error) => `failed (${error.message})`);
    tally(outcomes, `post ${outcome}`);
    if (outcome === '00') event.repliedAt = performance.now();
    else posted.delete(settlementId);
  };
  try {
    // The subscription is live once a first notification arrives on it: the warm-up's, or one of its own.
    do {
      arrived = Promise.withResolvers<void>();
      await post(false);
      await Promise.race([arrived.promise, new Promise((resolve) => setTimeout(resolve, 1_000))]);
    } while (![...posted.values()].some((event) => event.arrivals > 0));
    const warmupEnds = performance.now() + job.warmupS * 1000;
    const ends = warmupEnds + job.durationS * 1000;
    let measuring = false;
    const posts: Promise<void>[] = [];
    for (let sent = 0, started = performance.now(); ; sent += 1) {
      const at = started + (sent * 1000) / rate;
      if (at >= ends) break;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));
      if (!measuring && performance.now() >= warmupEnds) {
        measuring = true;
        onMeasuring();
      }
      posts.push(post(measuring));
    }
    await Promise.all(posts);
    const deadline = performance.now() + ARRIVAL_TIMEOUT_MS;
    const waiting = () => [...posted.values()].some((event) => event.measured && event.arrivals === 0);
    while (waiting() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    for (const event of posted.values()) {
      if (!event.measured) continue;
      tally(outcomes, event.arrivals === 0 ? 'missing' : 'arrived');
      if (event.arrivals > 1) tally(outcomes, 'doubled', event.arrivals - 1);
    }
    if (strangers > 0) tally(outcomes, 'unexpected', strangers);
    if (problem) tally(outcomes, `subscriber ${problem}`);
    const errors = Object.entries(outcomes).reduce((sum, [key, n]) => (key === 'arrived' || key === 'post 00' ? sum : sum + n), 0);
    return {
      scenario: job.scenario,
      load: `1 sub, ${rate}/s × ${job.durationS} s`,
      count: latency.count,
      seconds: job.durationS,
      perSecond: latency.count / job.durationS,
      latencyMs: latency.summary(),
      errors,
      outcomes,
    };
  } finally {
    await client.dispose();
  }
}
