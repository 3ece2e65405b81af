// What both stores share about `collectionSummary`: the bank-local days of a range (zone maths by
// luxon, so both stores cut days at the same instants, whatever their own time-zone support) and
// the exact totals assembled from each day's sums.
import { DateTime, Info, type Zone } from 'luxon';
import type { CollectionDayTotals, CollectionSummaryRecord, ConfirmationStatus } from '../domain/index.ts';
import { ZERO, addOptional, formatAmount, type ExactDecimal } from './decimal.ts';

/** One bank-local day's part of a range: [from, to) in epoch milliseconds, and the zone's offset (minutes) at each. */
export interface DayWindow {
  date: string;
  from: number;
  to: number;
  fromOffset: number;
  toOffset: number;
}

/**
 * The exact sums of one day as a store reads them, over the notifications counted (see
 * countedStatuses); null where no notification counted carries the amount.
 */
export interface DaySums {
  count: number;
  /** The day's notifications the bank refuted, never counted. */
  refuted: number;
  transactionAmount: ExactDecimal | null;
  settledAmount: ExactDecimal | null;
  feeAmount: ExactDecimal | null;
  vatAmount: ExactDecimal | null;
}

/**
 * SQL (either store's) true where `confirmation_status` is one of `statuses`, written out: a literal
 * list the planner sees, each way of counting its own statement.
 */
export function statusIn(statuses: readonly ConfirmationStatus[]): string {
  return `confirmation_status IN (${statuses.map((status) => `'${status}'`).join(', ')})`;
}

/** The empty day: what a store adds to. */
export const NO_SUMS: DaySums = { count: 0, refuted: 0, transactionAmount: null, settledAmount: null, feeAmount: null, vatAmount: null };

const DAY_MS = 86_400_000;

/**
 * The bank-local calendar days that [from, to) touches, in order, each clipped to the range. Days
 * are cut at midnight in `timezone` (luxon knows its offsets and any DST change), not in UTC. A
 * year's summary has hundreds of days and runs on the event loop that also answers the bank, so the
 * zone is asked once per day (one offset), and luxon's full calendar arithmetic runs only for a day
 * whose offset changes.
 */
export function bankDays(from: Date, to: Date, timezone: string): DayWindow[] {
  const zone = zoneOf(timezone);
  const [start, end] = [from.getTime(), to.getTime()];
  const days: DayWindow[] = [];
  let day = DateTime.fromMillis(start, { zone: timezone }).startOf('day').toMillis();
  let offset = zone.offset(day);
  while (day < end) {
    // The next local midnight at today's offset; right unless the offset changes on the way, where
    // luxon finds the true one (a 23- or 25-hour day, or a midnight that a DST change skips).
    const localDay = Math.floor((day + offset * 60_000) / DAY_MS) * DAY_MS;
    let next = localDay + DAY_MS - offset * 60_000;
    let nextOffset = zone.offset(next);
    if (nextOffset !== offset) {
      next = DateTime.fromMillis(day, { zone: timezone }).plus({ days: 1 }).startOf('day').toMillis();
      nextOffset = zone.offset(next);
    }
    const [dayFrom, dayTo] = [Math.max(day, start), Math.min(next, end)];
    days.push({
      date: new Date(day + offset * 60_000).toISOString().slice(0, 10),
      from: dayFrom,
      to: dayTo,
      fromOffset: dayFrom === day ? offset : zone.offset(dayFrom),
      toOffset: dayTo === next ? nextOffset : zone.offset(dayTo),
    });
    [day, offset] = [next, nextOffset];
  }
  return days;
}

/**
 * A zone whose offsets are remembered by instant: summaries ask for the same midnights again and
 * again (every year-long summary walks the same days), and asking Intl is the costly part.
 */
interface RememberingZone {
  readonly isUniversal: boolean;
  offset(ms: number): number;
}

/** Instants remembered per zone; past it the memory starts afresh (a few years of midnights fit). */
const REMEMBERED_INSTANTS = 4_096;
const zones = new Map<string, RememberingZone>();

function zoneOf(timezone: string): RememberingZone {
  let remembering = zones.get(timezone);
  if (!remembering) {
    const zone: Zone = Info.normalizeZone(timezone);
    const offsets = new Map<number, number>();
    remembering = {
      isUniversal: zone.isUniversal,
      offset(ms) {
        let offset = offsets.get(ms);
        if (offset === undefined) {
          if (offsets.size >= REMEMBERED_INSTANTS) offsets.clear();
          offsets.set(ms, (offset = zone.offset(ms)));
        }
        return offset;
      },
    };
    zones.set(timezone, remembering);
  }
  return remembering;
}

/** An instant as ISO 8601 at `offset` minutes, written as luxon's toISO writes it in `timezone`. */
function isoAt(ms: number, offset: number, timezone: string): string {
  const local = new Date(ms + offset * 60_000).toISOString().slice(0, -1);
  if (offset === 0 && zoneOf(timezone).isUniversal) return `${local}Z`;
  const minutes = Math.abs(offset);
  return `${local}${offset < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/** Adds two days' sums exactly. */
export function addSums(a: DaySums, b: DaySums): DaySums {
  return {
    count: a.count + b.count,
    refuted: a.refuted + b.refuted,
    transactionAmount: addOptional(a.transactionAmount, b.transactionAmount),
    settledAmount: addOptional(a.settledAmount, b.settledAmount),
    feeAmount: addOptional(a.feeAmount, b.feeAmount),
    vatAmount: addOptional(a.vatAmount, b.vatAmount),
  };
}

/** The summary record: each day as asked, written in the bank's zone, and the range's totals. */
export function summaryRecord(days: readonly DayWindow[], sums: readonly DaySums[], timezone: string): CollectionSummaryRecord {
  const dayTotals: CollectionDayTotals[] = days.map((day, index) => ({
    date: day.date,
    from: isoAt(day.from, day.fromOffset, timezone),
    to: isoAt(day.to, day.toOffset, timezone),
    ...written(sums[index] ?? NO_SUMS),
  }));
  return { ...written(sums.reduce(addSums, NO_SUMS)), days: dayTotals };
}

function written(sums: DaySums) {
  const amount = (value: ExactDecimal | null) => (value === null ? null : formatAmount(value));
  return {
    count: sums.count,
    refutedCount: sums.refuted,
    // Every notification carries a transaction amount: nothing counted sums to zero.
    transactionAmount: formatAmount(sums.transactionAmount ?? ZERO),
    settledAmount: amount(sums.settledAmount),
    feeAmount: amount(sums.feeAmount),
    vatAmount: amount(sums.vatAmount),
  };
}
