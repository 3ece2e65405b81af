/**
 * Reading an app's metrics the way Prometheus does, through `GET /metrics`: tests observe the
 * server from outside, never through objects kept on it for them.
 */
import { request } from 'undici';
import { waitFor } from './wait.ts';

/** Anything that serves /metrics: a test app, a subgraph process. */
type MetricsSource = { baseUrl: string };

/** The text of the app's /metrics. */
export async function scrapeText(app: MetricsSource): Promise<string> {
  const response = await request(`${app.baseUrl}/metrics`);
  if (response.statusCode !== 200) throw new Error(`/metrics answered ${response.statusCode}`);
  return response.body.text();
}

/** The value of one series (`name` or `name{label="value",…}` exactly as exported), or undefined when absent. */
export async function scrape(app: MetricsSource, series: string): Promise<number | undefined> {
  const line = (await scrapeText(app)).split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The sum of every series of `metric` whose labels include all of `labels` (0 when none). */
export async function scrapeSum(app: MetricsSource, metric: string, labels: Record<string, string> = {}): Promise<number> {
  const wanted = Object.entries(labels).map(([name, value]) => `${name}="${value}"`);
  let sum = 0;
  for (const line of (await scrapeText(app)).split('\n')) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== metric) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((label) => present.includes(label))) sum += Number(match[3]);
  }
  return sum;
}

/**
 * Calls the app made to the bank (`bank_upstream_request_duration_seconds_count`), those of one
 * area, operation or outcome when `labels` say so; 0 when there were none. A read that joined an
 * identical call in flight is not a call of its own.
 */
export function bankCalls(app: MetricsSource, labels: Record<string, string> = {}): Promise<number> {
  return scrapeSum(app, 'bank_upstream_request_duration_seconds_count', labels);
}

/** Resolves once `count` incomingTransfer subscriptions are live on the app (`graphql_active_subscriptions`). */
export async function subscribersLive(app: MetricsSource, count: number, expireMs?: number): Promise<void> {
  await waitFor(async () => ((await scrape(app, 'graphql_active_subscriptions')) === count ? true : undefined), expireMs);
}
