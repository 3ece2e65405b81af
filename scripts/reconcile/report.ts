// What `npm run reconcile` prints and writes: the totals as a table, and one CSV row per id.
import { stringify } from 'csv-stringify/sync';
import { table } from '../bench/report.ts';
import { TOTALS, type ReconcileItem, type Totals } from './run.ts';

/** The totals as a Markdown table, readable in a terminal. */
export function totalsTable(totals: Totals): string {
  return table(
    ['total', 'ids'],
    TOTALS.map((name) => [name, String(totals[name])]),
  );
}

/** The per-id report: id, verdict, differences, recovered, error. */
export function reportCsv(items: readonly ReconcileItem[]): string {
  return stringify(
    items.map((item) => [item.id, item.verdict ?? '', item.differences.join(' '), item.recovered ? 'yes' : 'no', item.error ?? '']),
    { header: true, columns: ['id', 'verdict', 'differences', 'recovered', 'error'] },
  );
}

/** Whether the export needs someone's attention: money that differs, that the bank does not know, or ids not checked. */
export function needsAttention(totals: Totals): boolean {
  return totals.mismatched > 0 || totals.notAtBank > 0 || totals.failed > 0;
}
