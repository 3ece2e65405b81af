// Turns the measurements into the tables `npm run bench` prints.
import type { MemorySample, ServerSide } from './monitors.ts';
import type { LoadResult } from './protocol.ts';

/** One scenario: what the load side measured, what the server side saw meanwhile, or why it failed. */
export interface ScenarioReport extends LoadResult {
  server: ServerSide | undefined;
  /** Why the scenario could not run to the end; counted as an error. */
  failure: string | undefined;
}

export interface MemoryReport {
  before: MemorySample;
  peak: MemorySample;
  after: MemorySample;
  /** Whether `after` followed a forced GC (node --expose-gc). */
  forcedGc: boolean;
}

/** Plain text columns: first and last left-aligned, the others right-aligned so numbers line up. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const last = header.length - 1;
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 || i === last ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

/** Milliseconds with the precision that matters at their size. */
function ms(value: number): string {
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

/** What the clients saw: throughput, latency, errors and every outcome, one row per scenario. */
export function clientTable(reports: ScenarioReport[]): string {
  const header = ['scenario', 'load', 'per s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'count', 'non-2xx', 'errors', 'outcomes'];
  const rows = reports.map((r) => [
    r.scenario,
    r.load,
    r.perSecond.toFixed(0),
    ms(r.latencyMs.p50),
    ms(r.latencyMs.p90),
    ms(r.latencyMs.p99),
    ms(r.latencyMs.max),
    String(r.count),
    String(r.non2xx),
    String(r.errors),
    r.failure ? `FAILED: ${r.failure}` : outcomes(r.outcomes),
  ]);
  return table(header, rows);
}

/** What the server process did meanwhile: CPU, event loop, blocking store inserts, memory peaks. */
export function serverTable(reports: ScenarioReport[]): string {
  const header = ['scenario', 'server cpu', 'load cpu', 'loop busy', 'loop late p99/max ms', 'inserts', 'insert mean/p99/max ms', 'rss MiB', 'heap MiB'];
  const rows = reports.flatMap((r) => {
    const s = r.server;
    if (!s) return [];
    const inserts = s.inserts.count > 0 ? `${ms(s.inserts.mean)} / ${ms(s.inserts.p99)} / ${ms(s.inserts.max)}` : '-';
    return [[
      r.scenario,
      percent(s.cpuCores),
      percent(r.loadCpuCores),
      percent(s.loopUtilization),
      `${ms(s.loopDelayMs.p99)} / ${ms(s.loopDelayMs.max)}`,
      String(s.inserts.count),
      inserts,
      s.peak.rss.toFixed(0),
      s.peak.heapUsed.toFixed(0),
    ]];
  });
  return table(header, rows);
}

/** Memory of the server process before, at its peak during, and after the load. */
export function memoryTable(memory: MemoryReport): string {
  const row = (label: string, sample: MemorySample) => [label, sample.rss.toFixed(1), sample.heapUsed.toFixed(1)];
  return table(['server process, MiB', 'rss', 'heap used'], [
    row('before load', memory.before),
    row('peak during load', memory.peak),
    row(memory.forcedGc ? 'after load (forced GC)' : 'after load (no forced GC: run with --expose-gc)', memory.after),
  ]);
}

export const LEGEND = `\
per s: replies per second; fanout: deliveries per second (subscribers × events / time). Latency: from
  sending a request to its whole reply; fanout: from the POST's start to the event's arrival at each
  subscriber. errors: every outcome but the expected one (00, 01, ok, delivered once), non-2xx included.
server cpu / load cpu: cores used by each process (100% = one core). loop busy: share of the time the
  server's event loop was working; loop late: how late it ran a timer (a stall shows here).
inserts: store inserts (webhook deliveries that reached the store) and how long each held the event
  loop: node:sqlite is synchronous, so the whole transaction, fsync included, blocks it. Peaks per
  scenario are sampled every 100 ms.`;
