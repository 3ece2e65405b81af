// The tables `npm run bench` prints, as Markdown (docs/benchmarks.md keeps the rows with a target): the
// figures with their floor, ratio and target, built by `row`; then every run as the load side saw it
// and what each server process did meanwhile.
import type { ScenarioReport } from './suite.ts';

/** A target on the ratio (ours / floor) or on our figure alone. */
export interface Target {
  text: string;
  on: 'ratio' | 'ours';
  holds(value: number): boolean;
}
export const atLeast = (min: number, of = 'floor'): Target => ({ text: `≥ ${min}× ${of}`, on: 'ratio', holds: (v) => v >= min });
export const atMost = (max: number, of = 'floor'): Target => ({ text: `≤ ${max}× ${of}`, on: 'ratio', holds: (v) => v <= max });
export const below = (max: number, unit: string): Target => ({ text: `≤ ${max} ${unit}`, on: 'ours', holds: (v) => v <= max });
export const above = (min: number, unit: string): Target => ({ text: `≥ ${min} ${unit}`, on: 'ours', holds: (v) => v >= min });

/** One line of a figures table, as printed and as given in --json. */
export interface Row {
  figure: string;
  /** What the figure is held against: a floor, "no storm", "baseline". */
  floor: string;
  ours: string;
  /** Two replicas, where the run had them. */
  two?: string;
  floorValue: string;
  ratio: string;
  target: string;
  /** '' without a target; 'yes', or 'NO: …'. */
  met: string;
}

/** Milliseconds with the precision that matters at their size. */
export const ms = (value: number): string => (value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0));
export const whole = (value: number): string => value.toFixed(0);

/** A row from our figure and the floor's (NaN: not measured), judged against `target`. */
export function row(figure: string, floor: string, ours: number, theirs: number, format: (v: number) => string, target?: Target): Row {
  // A ratio of a negative growth (memory given back) says nothing.
  const ratio = ours >= 0 && theirs > 0 ? ours / theirs : Number.NaN;
  const show = (v: number) => (Number.isFinite(v) ? format(v) : '-');
  const judged = target?.on === 'ratio' ? ratio : ours;
  let met = '';
  if (target)
    met = !Number.isFinite(judged)
      ? 'not measured'
      : target.holds(judged)
        ? 'yes'
        : `NO: ${target.on === 'ratio' ? `${ratio.toFixed(2)}×` : format(ours)}`;
  return {
    figure,
    floor,
    ours: show(ours),
    floorValue: show(theirs),
    ratio: Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : '-',
    target: target?.text ?? '',
    met,
  };
}

/** A Markdown table, its columns padded so it reads in a terminal too; numbers right-aligned. */
export function table(header: string[], rows: string[][], left = 1): string {
  const widths = header.map((title, i) => Math.max(title.length, 3, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => (i < left || i === cells.length - 1 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i < left || i === widths.length - 1 ? `${'-'.repeat(w + 2)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** The figures table: with a column for two replicas when any row has one. */
export function figuresTable(rows: Row[]): string {
  const two = rows.some((r) => r.two !== undefined);
  const header = ['figure', 'against', 'ours', ...(two ? ['ours ×2'] : []), 'floor', 'ours/floor', 'target', 'met'];
  return table(
    header,
    rows.map((r) => [r.figure, r.floor, r.ours, ...(two ? [r.two ?? ''] : []), r.floorValue, r.ratio, r.target, r.met]),
    2,
  );
}

/** The growth mode's table: each figure at the baseline (the row's floor value) and at N rows. */
export function growthTable(rows: Row[]): string {
  return table(
    ['figure', 'baseline', 'N rows', 'N/baseline', 'target', 'met'],
    rows.map((r) => [r.figure, r.floorValue, r.ours, r.ratio, r.target, r.met]),
  );
}

const percent = (fraction: number) => `${(fraction * 100).toFixed(0)}%`;
const outcomes = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([, a], [, b]) => b - a)
    .map(([key, n]) => `${key} ${n}`)
    .join(', ');

/** Every run as the load side saw it, and what each server process did meanwhile. */
export function detailTables(reports: ScenarioReport[]): string {
  const clients = table(
    ['scenario', 'against', 'load', 'per s', 'p50 ms', 'p99 ms', 'max ms', 'errors', 'outcomes'],
    reports.map((r) => [
      r.scenario,
      r.target,
      r.load,
      whole(r.perSecond),
      ms(r.latencyMs.p50),
      ms(r.latencyMs.p99),
      ms(r.latencyMs.max),
      String(r.errors),
      r.failure ? `FAILED: ${r.failure}` : outcomes(r.outcomes),
    ]),
    3,
  );
  const servers = table(
    ['scenario', 'process', 'server cpu', 'load cpu', 'loop busy', 'loop late p99 / max ms', 'rss MiB', 'heap MiB'],
    reports.flatMap((r) =>
      r.servers.map(({ name, side }) => [
        r.subscribers === undefined ? r.scenario : `${r.scenario} ${r.subscribers}`,
        name,
        percent(side.cpuCores),
        percent(r.loadCpuCores),
        percent(side.loopUtilization),
        `${ms(side.loopDelayMs.p99)} / ${ms(side.loopDelayMs.max)}`,
        whole(side.peak.rss),
        whole(side.peak.heapUsed),
      ]),
    ),
    2,
  );
  return `${clients}\n\n${servers}`;
}
