// What both stores share about `collectionSummary`: the bank-local days of a range (zone maths by
// luxon, so both stores cut days at the same instants, whatever their own time-zone support) and
// the exact totals assembled from each day's sums.
import { DateTime } from 'luxon';
import type { CollectionDayTotals, CollectionSummaryRecord } from '../domain/index.ts';
import { ZERO, addOptional, formatAmount, type ExactDecimal } from './decimal.ts';

/** One bank-local day's part of a range: [from, to) in epoch milliseconds. */
export interface DayWindow {
  date: string;
  from: number;
  to: number;
}

/** The exact sums of one day as a store reads them; null where no notification carries the amount. */
export interface DaySums {
  count: number;
  transactionAmount: ExactDecimal | null;
  settledAmount: ExactDecimal | null;
  feeAmount: ExactDecimal | null;
  vatAmount: ExactDecimal | null;
}

/** The empty day: what a store adds to. */
export const NO_SUMS: DaySums = { count: 0, transactionAmount: null, settledAmount: null, feeAmount: null, vatAmount: null };

/**
 * The bank-local calendar days that [from, to) touches, in order, each clipped to the range. Days
 * are cut at midnight in `timezone` (luxon knows its offsets and any DST change), not in UTC.
 */
export function bankDays(from: Date, to: Date, timezone: string): DayWindow[] {
  const end = to.getTime();
  const days: DayWindow[] = [];
  let day = DateTime.fromMillis(from.getTime(), { zone: timezone }).startOf('day');
  while (day.toMillis() < end) {
    const next = day.plus({ days: 1 }).startOf('day');
    days.push({ date: day.toISODate()!, from: Math.max(day.toMillis(), from.getTime()), to: Math.min(next.toMillis(), end) });
    day = next;
  }
  return days;
}

/** Adds two days' sums exactly. */
export function addSums(a: DaySums, b: DaySums): DaySums {
  return {
    count: a.count + b.count,
    transactionAmount: addOptional(a.transactionAmount, b.transactionAmount),
    settledAmount: addOptional(a.settledAmount, b.settledAmount),
    feeAmount: addOptional(a.feeAmount, b.feeAmount),
    vatAmount: addOptional(a.vatAmount, b.vatAmount),
  };
}

/** The summary record: each day as asked, written in the bank's zone, and the range's totals. */
export function summaryRecord(days: readonly DayWindow[], sums: readonly DaySums[], timezone: string): CollectionSummaryRecord {
  const iso = (ms: number) => DateTime.fromMillis(ms, { zone: timezone }).toISO()!;
  const dayTotals: CollectionDayTotals[] = days.map((day, index) => ({
    date: day.date,
    from: iso(day.from),
    to: iso(day.to),
    ...written(sums[index] ?? NO_SUMS),
  }));
  return { ...written(sums.reduce(addSums, NO_SUMS)), days: dayTotals };
}

function written(sums: DaySums) {
  const amount = (value: ExactDecimal | null) => (value === null ? null : formatAmount(value));
  return {
    count: sums.count,
    // Every notification carries a transaction amount: nothing counted sums to zero.
    transactionAmount: formatAmount(sums.transactionAmount ?? ZERO),
    settledAmount: amount(sums.settledAmount),
    feeAmount: amount(sums.feeAmount),
    vatAmount: amount(sums.vatAmount),
  };
}
