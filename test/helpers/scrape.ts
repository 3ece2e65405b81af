/** Reading the app's /metrics over HTTP, as Prometheus does. */
import { request } from 'undici';

/**
 * The value of `series` (name and labels exactly as exported, e.g. `graphql_subscription_events_total{source="live"}`)
 * in the /metrics of the app at `baseUrl`; 0 when it is not exported (yet).
 */
export async function scrape(baseUrl: string, series: string): Promise<number> {
  const response = await request(`${baseUrl}/metrics`);
  if (response.statusCode !== 200) throw new Error(`/metrics answered ${response.statusCode}`);
  const line = (await response.body.text()).split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}
