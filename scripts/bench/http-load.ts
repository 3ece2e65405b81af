// The HTTP scenarios, driven by autocannon: what each sends, what reply it expects, and the run.
import autocannon from 'autocannon';
import { createNotificationBodies, deliver, signedHeaders, WEBHOOK_PATH, webhookOutcome } from './bank.ts';
import { ACCOUNT_QUERY, BANKS_QUERY, GRAPHQL_PATH, graphqlOutcome, NOTIFICATIONS_QUERY, query } from './graphql.ts';
import { createLatencyRecorder } from './latency.ts';
import { tally, type LoadJob, type LoadScenario, type ScenarioResult } from './protocol.ts';

interface HttpScenario {
  path: string;
  headers: Record<string, string>;
  /** The same body every time, or a function making a fresh one per request. */
  body: string | (() => string);
  /** The only right outcome; every other one counts as an error. */
  expected: string;
  outcome(status: number, body: string): string;
  /** Run once before any load, e.g. to store what the scenario reads back. */
  prepare?(): Promise<void>;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The scenario `job.scenario` against the subgraph at `baseUrl`. */
function httpScenario(name: Exclude<LoadScenario, 'fanout' | 'resume'>, baseUrl: string, job: LoadJob): HttpScenario {
  const nextNotification = createNotificationBodies();
  const graphql = (text: string, hasData: (data: Record<string, any>) => boolean): HttpScenario => ({
    path: GRAPHQL_PATH,
    headers: JSON_HEADERS,
    body: JSON.stringify({ query: text }),
    expected: 'ok',
    outcome: (status, body) => graphqlOutcome(status, body, hasData),
  });

  switch (name) {
    case 'webhook-00':
      // A new settlementId per request: every one is a durable insert (the 00 path).
      return { path: WEBHOOK_PATH, headers: signedHeaders(), body: () => nextNotification().body, expected: '00', outcome: webhookOutcome };
    case 'webhook-01': {
      // One settlementId, stored once up front, then sent again and again (the 01 path).
      const { body } = nextNotification();
      return {
        path: WEBHOOK_PATH,
        headers: signedHeaders(),
        body,
        expected: '01',
        outcome: webhookOutcome,
        prepare: async () => expectOutcome('storing the repeated notification', await deliver(baseUrl, body), '00'),
      };
    }
    case 'query-banks':
      return graphql(BANKS_QUERY, (data) => data.banks?.length > 0);
    case 'query-account':
      // A null bank would mean the bank list failed: the account lookup alone is not the scenario.
      return graphql(ACCOUNT_QUERY, (data) => typeof data.account?.accountName === 'string' && typeof data.account.bank?.name === 'string');
    case 'query-notifications':
      return {
        ...graphql(NOTIFICATIONS_QUERY, (data) => data.collectionNotifications?.edges?.length === 20),
        // Run alone (--only), the store may hold fewer than a page: fill one.
        prepare: () => fillOnePage(baseUrl, nextNotification),
      };
    case 'query-deep-page':
      // The growth mode's page deep in one account's history: the query carries the cursor.
      if (!job.query) throw new Error('query-deep-page needs the job\'s query');
      return graphql(job.query, (data) => data.collectionNotifications?.edges?.length === 20);
    case 'query-summary': {
      // The growth mode's summaries: one request, sent alike to ours and to the plain SUM; the count
      // and the sum must be the ones both gave when asked first.
      const { summary } = job;
      if (!summary) throw new Error('query-summary needs the job\'s summary');
      const { count, transactionAmount } = summary;
      return {
        ...graphql('', (data) => data.collectionSummary?.count === count && data.collectionSummary.transactionAmount === transactionAmount),
        body: summary.body,
      };
    }
  }
}

function expectOutcome(what: string, outcome: string, expected: string): void {
  if (outcome !== expected) throw new Error(`${what}: expected ${expected}, got ${outcome}`);
}

async function fillOnePage(baseUrl: string, nextNotification: () => { body: string }): Promise<void> {
  const data = await query(baseUrl, NOTIFICATIONS_QUERY);
  const missing = 20 - (data.collectionNotifications?.edges?.length ?? 0);
  for (let i = 0; i < missing; i += 1) {
    expectOutcome('filling the store', await deliver(baseUrl, nextNotification().body), '00');
  }
}

/**
 * Runs an HTTP scenario: its preparation, then one autocannon run of warm-up + duration seconds in
 * which only requests sent after the warm-up count. One run, not two, so the connections are open
 * and busy when measuring starts; and counted by when a request was sent, not answered, because the
 * first requests of fresh connections can wait their turn for up to a second while the others are
 * served (seen even against a bare node:http server). `onMeasuring` tells the server side it starts.
 */
export async function runHttpScenario(job: LoadJob, onMeasuring: () => void): Promise<ScenarioResult> {
  if (job.scenario === 'fanout' || job.scenario === 'resume') throw new Error(`${job.scenario} is not an HTTP scenario`);
  const scenario = httpScenario(job.scenario, job.baseUrl, job);
  await scenario.prepare?.();

  const latency = createLatencyRecorder();
  const outcomes: Record<string, number> = {};
  let non2xx = 0;
  let measuringSince = Number.POSITIVE_INFINITY;
  const warmup = setTimeout(() => {
    measuringSince = performance.now();
    onMeasuring();
  }, job.warmupS * 1000);
  const result = await cannon(job, scenario, (status, body, ms) => {
    const outcome = scenario.outcome(status, body);
    if (performance.now() - ms >= measuringSince) {
      latency.record(ms);
      tally(outcomes, outcome);
      if (status < 200 || status > 299) non2xx += 1;
    } else if (outcome !== scenario.expected) {
      // A wrong reply is an error even during the warm-up.
      tally(outcomes, `warm-up ${outcome}`);
    }
  });
  clearTimeout(warmup);
  const seconds = Math.max((performance.now() - measuringSince) / 1000, 0);
  // autocannon counts refused/reset connections and time-outs apart from replies.
  if (result.errors - result.timeouts > 0) tally(outcomes, 'connection error', result.errors - result.timeouts);
  if (result.timeouts > 0) tally(outcomes, 'timeout', result.timeouts);

  const wrong = Object.entries(outcomes).reduce((sum, [key, n]) => (key === scenario.expected ? sum : sum + n), 0);
  return {
    scenario: job.scenario,
    load: `${job.connections} conn × ${job.durationS} s${job.baseUrls.length > 1 ? ` on ${job.baseUrls.length}` : ''}`,
    count: latency.count,
    seconds,
    perSecond: seconds > 0 ? latency.count / seconds : 0,
    latencyMs: latency.summary(),
    non2xx,
    errors: wrong,
    outcomes,
  };
}

/** One autocannon run, calling `onReply` with each reply's status, body and time in ms. */
function cannon(job: LoadJob, scenario: HttpScenario, onReply: (status: number, body: string, ms: number) => void): Promise<autocannon.Result> {
  const { body } = scenario;
  // autocannon hands the body to onResponse and the time to the 'response' event, one right after
  // the other for the same reply: the body waits here for its time.
  let replied = { status: 0, body: '' };
  const request: autocannon.Request = {
    method: 'POST',
    path: scenario.path,
    headers: scenario.headers,
    ...(typeof body === 'string' ? { body } : { setupRequest: (req: autocannon.Request) => ({ ...req, body: body() }) }),
    onResponse: (status: number, replyBody: string) => {
      replied = { status, body: replyBody };
    },
  };
  const duration = job.warmupS + job.durationS;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: urlOption(job), connections: job.connections, duration, requests: [request] },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    instance.on('response', (_client, _status, _bytes, ms) => onReply(replied.status, replied.body, ms));
  });
}

/** More than one origin (replicas): autocannon spreads the connections over them (lib/url.js takes an array; its typings say string). */
function urlOption(job: LoadJob): string {
  return (job.baseUrls.length > 1 ? job.baseUrls : job.baseUrl) as unknown as string;
}
