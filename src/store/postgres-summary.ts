// PostgreSQL's side of collectionSummary and time ranges, over the numeric and event_time columns
// the insert writes: numeric sums are exact, and pg hands them over as text.
import { countedStatuses, REFUTED_STATUSES } from '../domain/index.ts';
import { parseDecimal } from './decimal.ts';
import type { AccountFilter } from './core.ts';
import type { RunQuery } from './postgres-deadline.ts';
import { forAccounts, withAccountVariants } from './postgres-queries.ts';
import { statusIn, type DaySums, type DayWindow } from './summary.ts';

/**
 * One aggregate per day of the rows `counted` (the status tested once a row, read from the time
 * index with the amounts), and a count of the refuted ones, rare, from the index of those alone:
 * each an index-only range scan, all in one statement (so one snapshot).
 */
const sumsPerDay = (confirmed: boolean) => (account: string) =>
  `SELECT s.*, r.refuted FROM unnest($1::timestamptz[], $2::timestamptz[]) WITH ORDINALITY AS d(start_at, end_at, day)
  CROSS JOIN LATERAL (
    SELECT count(*) AS count, sum(transaction_amount_numeric) AS transaction_amount, sum(settled_amount_numeric) AS settled_amount,
      sum(fee_amount_numeric) AS fee_amount, sum(vat_amount_numeric) AS vat_amount
    FROM collection_notifications
    WHERE ${account}event_time >= d.start_at AND event_time < d.end_at AND ${statusIn(countedStatuses(confirmed))}
  ) AS s
  CROSS JOIN LATERAL (
    SELECT count(*) AS refuted FROM collection_notifications
    WHERE ${account}event_time >= d.start_at AND event_time < d.end_at AND ${statusIn(REFUTED_STATUSES)}
  ) AS r
  ORDER BY d.day`;

/** The statements, by name: named, so each connection plans them once. Each way of counting has its own. */
export const SUMMARY_QUERIES = withAccountVariants({ daySums: sumsPerDay(false), confirmedDaySums: sumsPerDay(true) });

interface SumsRow {
  count: string;
  refuted: string;
  transaction_amount: string | null;
  settled_amount: string | null;
  fee_amount: string | null;
  vat_amount: string | null;
}

/** Each day's sums, by one statement (so one snapshot), counted as `countedStatuses(confirmed)` says. */
export async function daySums(run: RunQuery, days: readonly DayWindow[], filter: AccountFilter, confirmed: boolean): Promise<DaySums[]> {
  const starts = days.map((day) => new Date(day.from).toISOString());
  const ends = days.map((day) => new Date(day.to).toISOString());
  const { name, values } = forAccounts(confirmed ? 'confirmedDaySums' : 'daySums', filter, [starts, ends]);
  const { rows } = await run<SumsRow>({ name: `summary-${name}`, text: SUMMARY_QUERIES[name], values });
  return rows.map(toSums);
}

function toSums(row: SumsRow): DaySums {
  const amount = (text: string | null) => (text === null ? null : parseDecimal(text));
  return {
    count: Number(row.count),
    refuted: Number(row.refuted),
    transactionAmount: amount(row.transaction_amount),
    settledAmount: amount(row.settled_amount),
    feeAmount: amount(row.fee_amount),
    vatAmount: amount(row.vat_amount),
  };
}
