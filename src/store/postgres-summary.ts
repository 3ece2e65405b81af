// PostgreSQL's side of collectionSummary and time ranges, over the numeric and event_time columns
// the insert writes: numeric sums are exact, and pg hands them over as text.
import { parseDecimal } from './decimal.ts';
import type { AccountFilter } from './core.ts';
import type { RunQuery } from './postgres-deadline.ts';
import { forAccounts, withAccountVariants } from './postgres-queries.ts';
import type { DaySums, DayWindow } from './summary.ts';

const SUMS = `count(*) AS count, sum(transaction_amount_numeric) AS transaction_amount, sum(settled_amount_numeric) AS settled_amount,
  sum(fee_amount_numeric) AS fee_amount, sum(vat_amount_numeric) AS vat_amount`;

/** One aggregate per day, each an index range scan, in one statement (so one snapshot). */
const sumsPerDay = (
  account: string,
) => `SELECT s.* FROM unnest($1::timestamptz[], $2::timestamptz[]) WITH ORDINALITY AS d(start_at, end_at, day)
  CROSS JOIN LATERAL (
    SELECT ${SUMS} FROM collection_notifications WHERE ${account}event_time >= d.start_at AND event_time < d.end_at
  ) AS s
  ORDER BY d.day`;

/** The statements, by name: named, so each connection plans them once. */
export const SUMMARY_QUERIES = withAccountVariants({ daySums: sumsPerDay });

interface SumsRow {
  count: string;
  transaction_amount: string | null;
  settled_amount: string | null;
  fee_amount: string | null;
  vat_amount: string | null;
}

/** Each day's sums, by one statement (so one snapshot). */
export async function daySums(run: RunQuery, days: readonly DayWindow[], filter: AccountFilter): Promise<DaySums[]> {
  const starts = days.map((day) => new Date(day.from).toISOString());
  const ends = days.map((day) => new Date(day.to).toISOString());
  const { name, values } = forAccounts('daySums', filter, [starts, ends]);
  const { rows } = await run<SumsRow>({ name: `summary-${name}`, text: SUMMARY_QUERIES[name], values });
  return rows.map(toSums);
}

function toSums(row: SumsRow): DaySums {
  const amount = (text: string | null) => (text === null ? null : parseDecimal(text));
  return {
    count: Number(row.count),
    transactionAmount: amount(row.transaction_amount),
    settledAmount: amount(row.settled_amount),
    feeAmount: amount(row.fee_amount),
    vatAmount: amount(row.vat_amount),
  };
}
