import { request } from 'undici';
import type { TestApp } from './app.ts';

/** The value of `series` (name and labels exactly as exported) in the app's /metrics, or undefined. */
export async function scrape(app: TestApp, series: string): Promise<number | undefined> {
  const response = await request(`${app.baseUrl}/metrics`);
  if (response.statusCode !== 200) throw new Error(`/metrics answered ${response.statusCode}`);
  const line = (await response.body.text()).split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The sum of every series of `metric` whose labels include all of `labels` (0 when none). */
export async function scrapeSum(app: TestApp, metric: string, labels: Record<string, string> = {}): Promise<number> {
  const response = await request(`${app.baseUrl}/metrics`);
  const wanted = Object.entries(labels).map(([name, value]) => `${name}="${value}"`);
  let sum = 0;
  for (const line of (await response.body.text()).split('\n')) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== metric) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((label) => present.includes(label))) sum += Number(match[3]);
  }
  return sum;
}
