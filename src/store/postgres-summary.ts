// PostgreSQL's side of collectionSummary and time ranges, over the numeric and event_time columns
// the insert writes: numeric sums are exact, and pg hands them over as text.
import { countedStatuses, REFUTED_STATUSES } from '../domain/index.ts';
import { parseDecimal } from './decimal.ts';
import type { AccountFilter } from './core.ts';
import type { RunQuery } from './postgres-deadline.ts';
import { forAccounts, withAccountVariants } from './postgres-queries.ts';
import { statusIn, type DaySums, type DayWindow } from './summary.ts';

/**
 * One aggregate per day, each an index-only range scan of the time index (which carries the amounts
 * and the status), all in one statement (so one snapshot): the rows `counted` summed, and the
 * refuted ones counted, the status tested once a row. The status is read from the scan, never used
 * to pick an index: a planner without statistics would otherwise walk a status index for every day.
 */
const sumsPerDay = (confirmed: boolean) => (account: string) =>
  `SELECT s.* FROM unnest($1::timestamptz[], $2::timestamptz[]) WITH ORDINALITY AS d(start_at, end_at, day)
  CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE counted) AS count, sum(transaction_amount_numeric) FILTER (WHERE counted) AS transaction_amount,
      sum(settled_amount_numeric) FILTER (WHERE counted) AS settled_amount, sum(fee_amount_numeric) FILTER (WHERE counted) AS fee_amount,
      sum(vat_amount_numeric) FILTER (WHERE counted) AS vat_amount, count(*) FILTER (WHERE refuted) AS refuted
    FROM (
      SELECT transaction_amount_numeric, settled_amount_numeric, fee_amount_numeric, vat_amount_numeric,
        ${statusIn(countedStatuses(confirmed))} AS counted, ${statusIn(REFUTED_STATUSES)} AS refuted
      FROM collection_notifications
      WHERE ${account}event_time >= d.start_at AND event_time < d.end_at
    ) AS day_rows
  ) AS s
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
