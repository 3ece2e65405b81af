// The webhook beside the worst read of raw bodies: ours alone on a store of its own, whose quarantine
// holds refused bodies of the largest size the webhook reads, each of control characters (written
// `\u0001` in a response: the most JSON a body of that size can make); then the webhook at a fixed
// rate, alone and beside a reader sending, back to back, the most expensive read of raw bodies the
// default budget lets through. What it shows: the process's peak RSS meanwhile, against the memory
// limit the shipped manifests give a pod, and what the read costs the webhook.
import { loadavg } from 'node:os';
import { request } from 'undici';
import { DEFAULT_MAX_OPERATION_COST, DEFAULT_WEBHOOK_MAX_BODY_BYTES } from '../../src/config/index.ts';
import { deliver } from './bank.ts';
import { GRAPHQL_PATH } from './graphql.ts';
import { runInLoadProcess } from './load-process.ts';
import type { BenchOptions } from './options.ts';
import type { LoadJob } from './protocol.ts';
import { below, ms, row, whole, type Row } from './report.ts';
import { appEnv, ownStore, type Services, type StoreKind } from './stores.ts';
import { describe, runOnServers, type ScenarioReport } from './suite.ts';
import { startTarget, type Target } from './targets.ts';

/** deploy/kubernetes: the Deployment's memory limit. */
const MANIFEST_LIMIT_MIB = 768;
/**
 * Ours' heap as Node sizes it in a container of that limit: Node hands V8 the container's memory, and
 * V8 gives its old generation a quarter of it, doubled on 64-bit. Left to size it from the whole
 * machine, V8 would let the garbage of several reads pile up before collecting any, and the peak
 * would be the machine's, not the pod's.
 */
const POD_HEAP = [`--max-old-space-size=${MANIFEST_LIMIT_MIB / 2}`];
const SIZES = { full: { rate: 200 }, quick: { rate: 100 } };
const WEBHOOK_CONNECTIONS = 20;
/**
 * 1 + 200 and 1 + 3 units: the default budget (25) in full, 230 raw bodies, every one the text kind
 * (a control character is six characters of JSON there, four bytes in base64).
 */
const WORST_READ = `{
  a: quarantinedDeliveries(first: 100) { nodes { rawBody again: rawBody } }
  b: quarantinedDeliveries(first: 30) { nodes { rawBody } }
}`;
const WORST_BODIES = 230;
/** The same with one raw body more: past the budget, refused before it reads anything. */
const ONE_MORE = WORST_READ.replace('first: 30', 'first: 31');
const STORED = 100;

/** Fills a store of `kind` with the largest bodies, and measures the webhook without and beside the worst read, rounds taking turns. */
export async function rawBodies(
  options: BenchOptions,
  kind: StoreKind,
  parentDir: string,
  services?: Services,
): Promise<{ rows: Row[]; reports: ScenarioReport[] }> {
  const { rate } = options.quick ? SIZES.quick : SIZES.full;
  const say = (line: string) => process.stderr.write(`[${kind} raw bodies] ${line}\n`);
  const store = await ownStore(kind, parentDir, services?.databaseUrl);
  let target: Target | undefined;
  try {
    target = await startTarget('app', 'ours', appEnv(store.storeUrl, services?.redisUrl ?? 'memory:'), POD_HEAP);
    say(`keeping ${STORED} refused bodies of ${DEFAULT_WEBHOOK_MAX_BODY_BYTES} bytes through the webhook…`);
    const body = '\u0001'.repeat(DEFAULT_WEBHOOK_MAX_BODY_BYTES);
    for (let i = 0; i < STORED; i += 1) {
      const outcome = await deliver(target.baseUrl, body);
      if (outcome !== '02') throw new Error(`keeping a refused body: expected 02, got ${outcome}`);
    }
    await expectRefused(target.baseUrl, ONE_MORE);
    const webhook = { ...options, connections: WEBHOOK_CONNECTIONS };
    const alone: ScenarioReport[] = [];
    const beside: ScenarioReport[] = [];
    const reads: ScenarioReport[] = [];
    for (let round = 1; round <= options.rounds; round += 1) {
      const of = options.rounds > 1 ? ` (round ${round} of ${options.rounds})` : '';
      say(`webhook 00 at ${rate}/s, ${options.durationS} s, alone${of} (load average ${loadavg()[0]!.toFixed(1)})…`);
      alone.push({ ...(await runOnServers('webhook-00', webhook, [target], 'ours', { rate })), target: 'ours, alone' });
      say(`  ${describe(alone.at(-1)!)}`);
      say(`the same beside a reader of ${WORST_BODIES} raw bodies a read${of}…`);
      const result = await besideReads(target, webhook, rate);
      beside.push(result.webhook);
      reads.push(result.reads);
      say(`  ${describe(result.webhook)}, peak rss ${whole(peakRss(result.webhook))} MiB; reads: ${describe(result.reads)}`);
    }
    const [calm, busy, read] = [worst(alone), worst(beside), worst(reads)];
    return { rows: rawRows(rate, calm, busy, read), reports: [calm, busy, read] };
  } finally {
    await target?.stop();
    await store.drop();
  }
}

/** Throws unless `query` is refused for its price. */
async function expectRefused(baseUrl: string, query: string): Promise<void> {
  const response = await request(`${baseUrl}${GRAPHQL_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const reply = (await response.body.json()) as { errors?: { extensions?: { code?: string; cost?: { max?: number } } }[] };
  const refusal = reply.errors?.[0]?.extensions;
  if (refusal?.code !== 'COST_ESTIMATED_TOO_EXPENSIVE' || refusal.cost?.max !== DEFAULT_MAX_OPERATION_COST)
    throw new Error(`one raw body past the worst read should be refused for its price, got ${JSON.stringify(reply).slice(0, 200)}`);
}

/** One round: the reader starts, and once it is reading the webhook load runs beside it. */
async function besideReads(target: Target, options: BenchOptions, rate: number) {
  const reading = Promise.withResolvers<void>();
  const job: LoadJob = {
    scenario: 'raw-reads',
    baseUrl: target.baseUrl,
    baseUrls: [target.baseUrl],
    // Past the webhook's whole run, its start-up included.
    durationS: options.warmupS + options.durationS + 1,
    warmupS: 0,
    connections: 1,
    subscribers: 0,
    events: 0,
    rawReads: { clients: 1, query: WORST_READ, bodies: WORST_BODIES },
  };
  const reader = runInLoadProcess(job, { onMeasuring: reading.resolve });
  await Promise.race([reading.promise, reader.catch(() => undefined)]);
  const webhook = await runOnServers('webhook-00', options, [target], 'ours', { rate });
  const base = { side: 'ours' as const, target: 'ours, the worst read', subscribers: undefined, perSubscriberKB: undefined, servers: [] };
  const reads: ScenarioReport = await reader.then(
    (result) => ({ ...result, ...base, failure: undefined }),
    (error: Error) => ({
      ...webhook,
      ...base,
      scenario: 'raw-reads',
      count: 0,
      perSecond: 0,
      errors: 1,
      outcomes: {},
      failure: error.message,
    }),
  );
  return { webhook: { ...webhook, target: 'ours, beside the worst read' }, reads };
}

/** The process's peak RSS over a run, MiB; NaN when not measured. */
const peakRss = (report: ScenarioReport) => report.servers[0]?.side.peak.rss ?? Number.NaN;

/** The run with the highest p99 (the target is on the worst), carrying every run's errors and first failure. */
function worst(runs: ScenarioReport[]): ScenarioReport {
  const sorted = [...runs].sort((a, b) => b.latencyMs.p99 - a.latencyMs.p99);
  return {
    ...sorted[0]!,
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    failure: runs.find((r) => r.failure)?.failure,
  };
}

function rawRows(rate: number, calm: ScenarioReport, busy: ScenarioReport, read: ScenarioReport): Row[] {
  const label = `webhook 00 at ${rate}/s beside the worst raw-body read`;
  const value = (r: ScenarioReport, pick: (r: ScenarioReport) => number) => (r.failure ? Number.NaN : pick(r));
  return [
    row(
      `${label}: p99 ms`,
      'alone',
      value(busy, (r) => r.latencyMs.p99),
      value(calm, (r) => r.latencyMs.p99),
      ms,
    ),
    row(
      `${label}: max ms`,
      'alone',
      value(busy, (r) => r.latencyMs.max),
      value(calm, (r) => r.latencyMs.max),
      ms,
    ),
    row(
      `${label}: server peak rss MiB`,
      'alone',
      value(busy, peakRss),
      value(calm, peakRss),
      whole,
      below(MANIFEST_LIMIT_MIB, 'MiB (the manifests’ limit)'),
    ),
    row(
      `worst raw-body read (${WORST_BODIES} bodies, 25 units): answered/s`,
      '-',
      value(read, (r) => r.perSecond),
      Number.NaN,
      (v) => v.toFixed(1),
    ),
    row(
      'worst raw-body read: answer MiB',
      '-',
      value(read, (r) => (r.largestReplyBytes ?? Number.NaN) / 2 ** 20),
      Number.NaN,
      (v) => v.toFixed(1),
    ),
  ];
}
