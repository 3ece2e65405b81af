// The growth mode's resume: one graphql-ws client on `incomingTransfer(after: <cursor>)` reads the
// replay as fast as it comes until the notification the orchestrator named arrives; events per
// second over the whole replay, each notification once.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { GRAPHQL_PATH } from './graphql.ts';
import { createLatencyRecorder } from './latency.ts';
import { tally, type LoadJob, type ScenarioResult } from './protocol.ts';

const SUBSCRIPTION = 'subscription Resume($after: String!) { incomingTransfer(after: $after) { settlementId transactionAmount } }';
/** A replay that delivers nothing for this long has failed. */
const STALL_MS = 30_000;

export async function runResume(job: LoadJob, onMeasuring: () => void): Promise<ScenarioResult> {
  const { after, lastSettlementId } = job.resume!;
  const client = createClient({
    url: `${job.baseUrl.replace(/^http/, 'ws')}${GRAPHQL_PATH}`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
  });
  const outcomes: Record<string, number> = {};
  const seen = new Set<string>();
  // The time between deliveries: a stall shows in p99 and max.
  const gaps = createLatencyRecorder();
  const started = performance.now();
  let last = started;
  try {
    onMeasuring();
    await new Promise<void>((resolve, reject) => {
      const stalled = () => reject(new Error(`no notification for ${STALL_MS / 1000} s after ${seen.size}`));
      let timer = setTimeout(stalled, STALL_MS);
      const unsubscribe = client.subscribe<{ incomingTransfer: { settlementId: string } }>(
        { query: SUBSCRIPTION, variables: { after } },
        {
          next: ({ data, errors }) => {
            const id = data?.incomingTransfer.settlementId;
            if (!id) return tally(outcomes, `error ${errors?.[0]?.message ?? 'no data'}`);
            gaps.record(performance.now() - last);
            last = performance.now();
            tally(outcomes, seen.has(id) ? 'repeated' : 'replayed');
            seen.add(id);
            clearTimeout(timer);
            if (id !== lastSettlementId) timer = setTimeout(stalled, STALL_MS);
            else {
              unsubscribe();
              resolve();
            }
          },
          error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
          complete: () => reject(new Error(`the subscription completed after ${seen.size} notifications`)),
        },
      );
    });
  } finally {
    await client.dispose();
  }
  const seconds = (last - started) / 1000;
  const count = outcomes.replayed ?? 0;
  return {
    scenario: 'resume',
    load: `1 subscriber, ${count} back`,
    count,
    seconds,
    perSecond: seconds > 0 ? count / seconds : 0,
    latencyMs: gaps.summary(),
    errors: Object.entries(outcomes).reduce((sum, [key, n]) => (key === 'replayed' ? sum : sum + n), 0),
    outcomes,
  };
}
