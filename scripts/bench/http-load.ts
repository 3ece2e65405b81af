// The HTTP jobs, driven by autocannon: what each sends, the one reply it expects, and the run.
import autocannon from 'autocannon';
import { createNotificationBodies, deliver, fillBody, REFUSED_ACCOUNT, signedHeaders, WEBHOOK_PATH, webhookOutcome } from './bank.ts';
import { ACCOUNT_QUERY, BANKS_QUERY, GRAPHQL_PATH, graphqlOutcome, pick } from './graphql.ts';
import { createLatencyRecorder } from './latency.ts';
import { LONG_LIST, tally, type LoadJob, type ScenarioResult } from './protocol.ts';

/** A reply later than this counts as a time-out where every request is counted (fill, fixed rate). */
const LATE_S = 60;

interface HttpJob {
  path: string;
  headers: Record<string, string>;
  /** The same body every time, or a fresh one per request. */
  body: string | (() => string);
  /** The only right outcome; every other counts as an error. */
  expected: string;
  outcome(status: number, body: string): string;
  /** Run once before the load, e.g. to store what the job sends again. */
  prepare?(): Promise<void>;
}

function httpJob(job: LoadJob): HttpJob {
  const webhook = { path: WEBHOOK_PATH, headers: signedHeaders(), outcome: webhookOutcome };
  const graphql = (body: string, hasData: (data: Record<string, any>) => boolean): HttpJob => ({
    path: GRAPHQL_PATH,
    headers: { 'content-type': 'application/json', ...job.headers },
    body,
    expected: 'ok',
    outcome: (status, reply) => graphqlOutcome(status, reply, hasData),
  });
  switch (job.scenario) {
    case 'webhook-00': {
      // A new settlementId per request: every one a durable insert.
      const next = createNotificationBodies();
      return { ...webhook, body: () => next().body, expected: '00' };
    }
    case 'webhook-02': {
      // A new delivery per request, refused for its content (an account of 9 digits): each kept in
      // the quarantine, durably, before its 02.
      const next = createNotificationBodies(REFUSED_ACCOUNT);
      return { ...webhook, body: () => next().body, expected: '02' };
    }
    case 'webhook-01': {
      // One settlementId, stored once up front, then sent again and again.
      const { body } = createNotificationBodies()();
      const prepare = async () => {
        const outcome = await deliver(job.baseUrl, body);
        if (outcome !== '00') throw new Error(`storing the repeated notification: expected 00, got ${outcome}`);
      };
      return { ...webhook, body, expected: '01', prepare };
    }
    case 'fill': {
      const { first, startMs, stepMs } = job.fill!;
      let index = first - 1;
      return { ...webhook, body: () => fillBody((index += 1), startMs, stepMs), expected: '00' };
    }
    case 'query-banks':
      return graphql(JSON.stringify({ query: BANKS_QUERY }), (data) => data.banks?.length > 0);
    case 'query-banks-600':
      return graphql(JSON.stringify({ query: BANKS_QUERY }), (data) => data.banks?.length === LONG_LIST);
    case 'query-account':
      // A null bank would mean the bank list failed: the account lookup alone is not the scenario.
      return graphql(JSON.stringify({ query: ACCOUNT_QUERY }), (data) => typeof data.account?.bank?.name === 'string');
    case 'query': {
      const { body, path, equals } = job.query!;
      return graphql(body, (data) => pick(data, path) === equals);
    }
    default:
      throw new Error(`${job.scenario} is not an HTTP job`);
  }
}

/**
 * Runs an HTTP job: one autocannon run of warm-up + duration seconds (or of `fill.count` requests)
 * in which only requests sent after the warm-up count. One run, so the connections are open and busy
 * when measuring starts; counted by when a request was sent, since the first requests of fresh
 * connections can wait their turn while the others are served. `onMeasuring` tells the servers.
 */
export async function runHttpJob(job: LoadJob, onMeasuring: () => void): Promise<ScenarioResult> {
  const http = httpJob(job);
  await http.prepare?.();
  const latency = createLatencyRecorder();
  const outcomes: Record<string, number> = {};
  let since = Number.POSITIVE_INFINITY;
  const startMeasuring = () => {
    since = performance.now();
    onMeasuring();
  };
  // With no warm-up every request counts, the first ones sent before any timer could fire too.
  if (job.warmupS === 0) startMeasuring();
  const warmup = setTimeout(() => since === Number.POSITIVE_INFINITY && startMeasuring(), job.warmupS * 1000);
  // While filling, how far and how fast, every second.
  const progress =
    job.fill &&
    setInterval(
      (total: number) =>
        process.stderr.write(
          `  fill: ${latency.count} of ${total} (${(latency.count / ((performance.now() - since) / 1000)).toFixed(0)}/s)\n`,
        ),
      1_000,
      job.fill.count,
    );
  const result = await cannon(job, http, (status, body, ms) => {
    const outcome = http.outcome(status, body);
    if (performance.now() - ms >= since) {
      latency.record(ms);
      tally(outcomes, outcome);
    } else if (outcome !== http.expected) tally(outcomes, `warm-up ${outcome}`);
  });
  clearTimeout(warmup);
  clearInterval(progress);
  const seconds = Math.max((performance.now() - since) / 1000, 0);
  // autocannon counts refused and reset connections and time-outs apart from replies.
  if (result.errors - result.timeouts > 0) tally(outcomes, 'connection error', result.errors - result.timeouts);
  if (result.timeouts > 0) tally(outcomes, 'timeout', result.timeouts);
  const paced = job.rate ? ` at ${job.rate}/s` : '';
  return {
    scenario: job.scenario,
    load: job.fill
      ? `${job.fill.count} posts`
      : `${job.connections} conn × ${job.durationS} s${paced}${job.baseUrls.length > 1 ? ` on ${job.baseUrls.length}` : ''}`,
    count: latency.count,
    seconds,
    perSecond: seconds > 0 ? latency.count / seconds : 0,
    latencyMs: latency.summary(),
    errors: Object.entries(outcomes).reduce((sum, [key, n]) => (key === http.expected ? sum : sum + n), 0),
    outcomes,
  };
}

/** One autocannon run, calling `onReply` with each reply's status, body and time in ms. */
function cannon(job: LoadJob, http: HttpJob, onReply: (status: number, body: string, ms: number) => void): Promise<autocannon.Result> {
  // autocannon hands the body to onResponse and the time to the 'response' event, one right after
  // the other for the same reply: the body waits here for its time.
  let replied = { status: 0, body: '' };
  const { body } = http;
  const request: autocannon.Request = {
    method: 'POST',
    path: http.path,
    headers: http.headers,
    ...(typeof body === 'string' ? { body } : { setupRequest: (req: autocannon.Request) => ({ ...req, body: body() }) }),
    onResponse: (status: number, replyBody: string) => void (replied = { status, body: replyBody }),
  };
  // More than one origin (replicas): autocannon spreads the connections (lib/url.js takes an array; its typings say string).
  const url = (job.baseUrls.length > 1 ? job.baseUrls : job.baseUrl) as unknown as string;
  // A fill, and the webhook at a fixed rate, count every request to its reply, however late: a
  // delivery held behind a read is what the read storm measures. The others end with their duration.
  const seconds = job.warmupS + job.durationS;
  const amount = job.fill
    ? { amount: job.fill.count }
    : job.rate
      ? { amount: Math.ceil(job.rate * seconds), overallRate: job.rate }
      : { duration: seconds };
  const rate = job.fill || job.rate ? { timeout: LATE_S } : {};
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, connections: job.connections, requests: [request], ...amount, ...rate }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
    instance.on('response', (_client, _status, _bytes, ms) => onReply(replied.status, replied.body, ms));
  });
}
