// The growth mode's resume: one graphql-ws client subscribes to `incomingTransfer(after: <cursor>)`
// and reads the replay as fast as it comes until the notification the orchestrator named arrives;
// events per second over the whole replay. Every notification must come once, in position order
// (the filled settlementIds increase with it), or it counts as an error.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { GRAPHQL_PATH } from './graphql.ts';
import { createLatencyRecorder } from './latency.ts';
import { tally, type LoadJob, type ScenarioResult } from './protocol.ts';

const RESUME_SUBSCRIPTION = 'subscription Resume($after: String!) { incomingTransfer(after: $after) { settlementId transactionAmount } }';
/** A replay that stops delivering for this long has failed. */
const STALL_MS = 30_000;

/** Runs the resume described by `job.resume`; `onMeasuring` marks its start for the server side. */
export async function runResume(job: LoadJob, onMeasuring: () => void): Promise<ScenarioResult> {
  if (!job.resume) throw new Error('resume needs the job\'s cursor and last settlementId');
  const { after, lastSettlementId } = job.resume;
  const client = createClient({ url: `${job.baseUrl.replace(/^http/, 'ws')}${GRAPHQL_PATH}`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
  const outcomes: Record<string, number> = {};
  // The time between deliveries: a stall shows in p99 and max.
  const gaps = createLatencyRecorder();
  let count = 0;
  let previous = '';
  const started = performance.now();
  let last = started;
  try {
    onMeasuring();
    await new Promise<void>((resolve, reject) => {
      let stall = setTimeout(() => reject(new Error(`no notification for ${STALL_MS / 1000} s after ${count}`)), STALL_MS);
      const unsubscribe = client.subscribe<{ incomingTransfer: { settlementId: string } }>(
        { query: RESUME_SUBSCRIPTION, variables: { after } },
        {
          next: ({ data, errors }) => {
            const id = data?.incomingTransfer.settlementId;
            if (!id) return void tally(outcomes, `error ${errors?.[0]?.message ?? 'no data'}`);
            const now = performance.now();
            gaps.record(now - last);
            last = now;
            count += 1;
            // Filled ids are fixed-width digits: their order is their position's.
            tally(outcomes, id > previous ? 'replayed' : 'out of order or repeated');
            previous = id;
            clearTimeout(stall);
            if (id === lastSettlementId) {
              unsubscribe();
              resolve();
            } else stall = setTimeout(() => reject(new Error(`no notification for ${STALL_MS / 1000} s after ${count}`)), STALL_MS);
          },
          error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
          complete: () => reject(new Error(`the subscription completed after ${count} notifications`)),
        },
      );
    });
  } finally {
    await client.dispose();
  }
  const seconds = (last - started) / 1000;
  return {
    scenario: 'resume',
    load: `1 subscriber, ${count} back`,
    count,
    seconds,
    perSecond: seconds > 0 ? count / seconds : 0,
    latencyMs: gaps.summary(),
    non2xx: 0,
    errors: Object.entries(outcomes).reduce((sum, [key, n]) => (key === 'replayed' ? sum : sum + n), 0),
    outcomes,
  };
}
