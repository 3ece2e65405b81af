// The raw-body reader, in a load process of its own: clients each sending, one after another, the
// most expensive read of raw bodies the default budget lets through (raw-bodies.ts says which), and
// checking that every answer is whole. Its figures: answers a second, their time, and the largest's size.
import { request } from 'undici';
import { GRAPHQL_PATH } from './graphql.ts';
import { createLatencyRecorder } from './latency.ts';
import { tally, type LoadJob, type ScenarioResult } from './protocol.ts';

/** `ok` when the reply holds `bodies` raw bodies and no error, else what it was. */
function outcomeOf(status: number, text: string, bodies: number): string {
  if (status !== 200) return `http ${status}`;
  let reply: { data?: Record<string, { nodes: Record<string, string>[] }>; errors?: { extensions?: { code?: string } }[] };
  try {
    reply = JSON.parse(text);
  } catch {
    return 'unreadable reply';
  }
  if (reply.errors?.length) return `graphql ${reply.errors[0]?.extensions?.code ?? 'error'}`;
  const held = Object.values(reply.data ?? {}).reduce(
    (sum, page) => sum + page.nodes.reduce((n, node) => n + Object.keys(node).length, 0),
    0,
  );
  return held === bodies ? 'ok' : `${held} bodies instead of ${bodies}`;
}

export async function runRawReads(job: LoadJob, onMeasuring: () => void): Promise<ScenarioResult> {
  const { clients, query, bodies } = job.rawReads!;
  const body = JSON.stringify({ query });
  const url = `${job.baseUrl}${GRAPHQL_PATH}`;
  const headers = { 'content-type': 'application/json', ...job.headers };
  const latency = createLatencyRecorder();
  const outcomes: Record<string, number> = {};
  let largest = 0;
  const started = performance.now();
  const until = started + job.durationS * 1000;
  const reader = async () => {
    while (performance.now() < until) {
      const sent = performance.now();
      const outcome = await request(url, { method: 'POST', headers, body }).then(
        async (response) => {
          const text = await response.body.text();
          largest = Math.max(largest, Buffer.byteLength(text));
          return outcomeOf(response.statusCode, text, bodies);
        },
        (error: Error) => `failed (${error.message})`,
      );
      if (outcome === 'ok') latency.record(performance.now() - sent);
      tally(outcomes, outcome);
    }
  };
  onMeasuring();
  await Promise.all(Array.from({ length: clients }, reader));
  const seconds = (performance.now() - started) / 1000;
  const answered = outcomes.ok ?? 0;
  return {
    scenario: 'raw-reads',
    load: `${clients} reader${clients > 1 ? 's' : ''} × ${job.durationS} s`,
    count: answered,
    seconds,
    perSecond: answered / seconds,
    latencyMs: latency.summary(),
    errors: Object.entries(outcomes).reduce((sum, [key, n]) => (key === 'ok' ? sum : sum + n), 0),
    outcomes,
    largestReplyBytes: largest,
  };
}
