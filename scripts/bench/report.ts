// The detail tables `npm run bench` prints under the comparison: every run as the load side saw it,
// and what each server process did meanwhile.
import type { ScenarioReport } from './suite.ts';

/** Plain text columns: first and last left-aligned, the others right-aligned so numbers line up. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const last = header.length - 1;
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 || i === last ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

/** Milliseconds with the precision that matters at their size. */
export function ms(value: number): string {
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(0)}%`;
}

/** "00 51234, 02 3": most frequent first. */
function outcomes(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([, a], [, b]) => b - a)
    .map(([key, n]) => `${key} ${n}`)
    .join(', ');
}

/** What the clients saw: throughput, latency, errors and every outcome, one row per run. */
export function clientTable(reports: ScenarioReport[]): string {
  const header = ['scenario', 'against', 'load', 'per s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'count', 'errors', 'outcomes'];
  const rows = reports.map((r) => [
    r.scenario,
    r.target,
    r.load,
    r.perSecond.toFixed(0),
    ms(r.latencyMs.p50),
    ms(r.latencyMs.p90),
    ms(r.latencyMs.p99),
    ms(r.latencyMs.max),
    String(r.count),
    String(r.errors),
    r.failure ? `FAILED: ${r.failure}` : outcomes(r.outcomes),
  ]);
  return table(header, rows);
}

/** What each server process did meanwhile: CPU, event loop, the store's batch writes, memory peaks. */
export function serverTable(reports: ScenarioReport[]): string {
  const header = ['scenario', 'process', 'server cpu', 'load cpu', 'loop busy', 'loop late p99/max ms', 'batches', 'batch mean/p99/max ms', 'rss MiB', 'heap MiB'];
  const rows = reports.flatMap((r) =>
    r.servers.map(({ name, side: s }) => {
      const batches = s.batches && s.batches.count > 0 ? `${ms(s.batches.mean)} / ${ms(s.batches.p99)} / ${ms(s.batches.max)}` : '-';
      return [
        r.subscribers === undefined ? r.scenario : `${r.scenario} ${r.subscribers}`,
        name,
        percent(s.cpuCores),
        percent(r.loadCpuCores),
        percent(s.loopUtilization),
        `${ms(s.loopDelayMs.p99)} / ${ms(s.loopDelayMs.max)}`,
        s.batches ? String(s.batches.count) : '-',
        batches,
        s.peak.rss.toFixed(0),
        s.peak.heapUsed.toFixed(0),
      ];
    }),
  );
  return table(header, rows);
}

export const LEGEND = `\
per s: replies per second; fanout: deliveries per second (subscribers × events / time). Latency: from
  sending a request to its whole reply; fanout: from reading the webhook's 00 reply to the event's
  arrival at each subscriber (one arriving before the reply was read counts as 0 ms).
errors: every outcome but the expected one (00, 01, ok, delivered once), non-2xx included.
server cpu / load cpu: cores used by each process (100% = one core). loop busy: share of the time the
  server's event loop was working; loop late: how late it ran a timer (a stall shows here).
batches: our store's batch writes (group commit) and how long each took, commit included (node:sqlite
  is synchronous: on SQLite the event loop is held that long). Memory peaks are sampled every 100 ms.`;
