// The read storm's readers, in a load process of their own: clients each asking, one after another,
// for a year-long summary of every account, and the hostile document of 100 aliases of it sent every
// other second. A document refused before it runs (by price, or by a document limit) is counted as
// refused, never as an error: refusing it is what the product may do.
import { request } from 'undici';
import { GRAPHQL_PATH } from './graphql.ts';
import { createLatencyRecorder } from './latency.ts';
import { tally, type LoadJob, type ScenarioResult } from './protocol.ts';

const SUMMARY = 'collectionSummary(from: $from, to: $to) { count transactionAmount days { date count } }';
const ALIASES = 100;
/** How often the hostile document goes: the storm is the summaries, the document its worst moments. */
const HOSTILE_EVERY_MS = 2_000;
/** Codes of a document refused before it runs. */
const REFUSED = new Set(['COST_ESTIMATED_TOO_EXPENSIVE', 'COST_ACTUAL_TOO_EXPENSIVE', 'GRAPHQL_VALIDATION_FAILED']);

/** ok, `refused <code>`, or what else the reply was. */
function outcomeOf(status: number, text: string): string {
  let reply: { data?: unknown; errors?: { extensions?: { code?: string } }[] };
  try {
    reply = JSON.parse(text);
  } catch {
    return `http ${status}, unreadable`;
  }
  const codes = (reply.errors ?? []).map((error) => error.extensions?.code ?? 'error');
  if (codes.length === 0) return status === 200 && reply.data ? 'ok' : `http ${status}`;
  return codes.every((code) => REFUSED.has(code)) ? `refused ${codes[0]}` : `graphql ${codes.find((code) => !REFUSED.has(code))}`;
}

export async function runStormReads(job: LoadJob, onMeasuring: () => void): Promise<ScenarioResult> {
  const { clients, from, to } = job.storm!;
  const variables = { from, to };
  const plain = JSON.stringify({ query: `query Year($from: DateTime!, $to: DateTime!) { ${SUMMARY} }`, variables });
  const aliases = Array.from({ length: ALIASES }, (_, i) => `s${i}: ${SUMMARY}`).join(' ');
  const hostile = JSON.stringify({ query: `query Hostile($from: DateTime!, $to: DateTime!) { ${aliases} }`, variables });
  const url = `${job.baseUrl}${GRAPHQL_PATH}`;
  const headers = { 'content-type': 'application/json', ...job.headers };
  const latency = createLatencyRecorder();
  const outcomes: Record<string, number> = {};
  const started = performance.now();
  const until = started + job.durationS * 1000;
  const ask = async (kind: 'summary' | 'hostile', body: string) => {
    const sent = performance.now();
    const outcome = await request(url, { method: 'POST', headers, body }).then(
      async (response) => outcomeOf(response.statusCode, await response.body.text()),
      (error: Error) => `failed (${error.message})`,
    );
    if (kind === 'summary' && outcome === 'ok') latency.record(performance.now() - sent);
    tally(outcomes, `${kind} ${outcome}`);
  };
  const reader = async () => {
    while (performance.now() < until) await ask('summary', plain);
  };
  // On a fixed beat, whether or not the last one was answered, as a hostile client sends: the
  // webhook's measured run always sees some arrive.
  const hostileSender = async () => {
    const sent: Promise<void>[] = [];
    for (let at = performance.now(); at < until; at += HOSTILE_EVERY_MS) {
      sent.push(ask('hostile', hostile));
      await new Promise((resolve) => setTimeout(resolve, at + HOSTILE_EVERY_MS - performance.now()));
    }
    await Promise.all(sent);
  };
  onMeasuring();
  await Promise.all([hostileSender(), ...Array.from({ length: clients }, reader)]);
  const seconds = (performance.now() - started) / 1000;
  const answered = (outcomes['summary ok'] ?? 0) + (outcomes['hostile ok'] ?? 0);
  const fine = (key: string) => key.endsWith(' ok') || key.includes(' refused ');
  return {
    scenario: 'storm-reads',
    load: `${clients} readers × ${job.durationS} s`,
    count: answered,
    seconds,
    perSecond: answered / seconds,
    latencyMs: latency.summary(),
    errors: Object.entries(outcomes).reduce((sum, [key, n]) => (fine(key) ? sum : sum + n), 0),
    outcomes,
  };
}
