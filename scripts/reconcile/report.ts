// What `npm run reconcile` prints and writes: the totals as a table, one CSV row per id, and whether
// the export reconciles clean.
import { stringify } from 'csv-stringify/sync';
import { table } from '../bench/report.ts';
import { TOTALS, type ReconcileItem, type Reconciled, type Totals } from './run.ts';

/** The totals as a Markdown table, readable in a terminal. */
export function totalsTable(totals: Totals): string {
  return table(
    ['total', 'ids'],
    TOTALS.map((name) => [name, String(totals[name])]),
  );
}

/**
 * The per-id report: id, verdict, differences, recovered, error. A cell a spreadsheet would run as a
 * formula (`=`, `+`, `-`, `@`, a tab or a carriage return first) is written after a `'`, as OWASP
 * advises for CSV exports: an id or an error message holds whatever the file or the bank gave it.
 */
export function reportCsv(items: readonly ReconcileItem[]): string {
  return stringify(
    items.map((item) => [item.id, item.verdict ?? '', item.differences.join(' '), item.recovered ? 'yes' : 'no', item.error ?? '']),
    {
      header: true,
      columns: ['id', 'verdict', 'differences', 'recovered', 'error'],
      cast: { string: (value) => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value) },
    },
  );
}

/** Whether every id of the export was checked and is MATCHED or recovered: anything else needs someone's attention. */
export function reconciledClean({ items, failure }: Reconciled, total: number): boolean {
  return failure === undefined && items.length === total && items.every((item) => item.verdict === 'MATCHED' || item.recovered);
}
