// SQLite's side of collectionSummary and time ranges: the columns the insert fills beside the text
// (the schema's migration says why they look so) and the queries over them.
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type { NewCollectionNotification } from '../domain/index.ts';
import { accountParameter as accountsOf, byAccountKind, rangedRead, type AccountKind } from './account-variants.ts';
import { parseDecimal, type ExactDecimal } from './decimal.ts';
import { selectList } from './notification-row.ts';
import type { AccountFilter } from './core.ts';
import { NO_SUMS, addSums, type DaySums, type DayWindow } from './summary.ts';

const AMOUNTS = ['transaction_amount', 'settled_amount', 'fee_amount', 'vat_amount'] as const;

/** The columns the insert fills after INSERT_COLUMNS, in the order `pushSummaryValues` writes them. */
export const SUMMARY_COLUMNS = [
  'event_ms',
  ...AMOUNTS.flatMap((amount) => [`${amount}_kobo_hi`, `${amount}_kobo_lo`]),
  'amounts_beyond_kobo',
] as const;

// Kobo when the integer part has at most 16 digits and nothing but zeros follows the second decimal.
const KOBO = /^(\d{1,16})(?:\.(\d{1,2})0*)?$/;
const LIMB = 1_000_000_000n;

/**
 * Appends an amount's kobo limbs [hi, lo] (kobo = hi * 10^9 + lo), or two nulls when it is absent or
 * does not fit; true when it does not fit. A few string operations, no BigInt.
 */
function pushKoboLimbs(values: SQLInputValue[], amount: string | null): boolean {
  const match = amount === null ? null : KOBO.exec(amount);
  if (!match) {
    values.push(null, null);
    return amount !== null;
  }
  const [, naira = '', fraction = ''] = match;
  const kobo = fraction.length === 2 ? Number(fraction) : Number(fraction) * 10;
  if (naira.length <= 7) {
    // Under 10^9 kobo: the low limb holds it all.
    values.push(0, Number(naira) * 100 + kobo);
  } else {
    // Up to 18 digits: too many for a double, so it is split as text.
    const digits = naira + String(kobo).padStart(2, '0');
    values.push(Number(digits.slice(0, -9)), Number(digits.slice(-9)));
  }
  return false;
}

/** Appends the summary columns' values (SUMMARY_COLUMNS order) of a new notification to `values`. */
export function pushSummaryValues(values: SQLInputValue[], notification: NewCollectionNotification): SQLInputValue[] {
  values.push(eventMs(notification.transactionTime ?? notification.receivedAt));
  // Each amount is pushed, whether or not an earlier one was beyond kobo.
  const transaction = pushKoboLimbs(values, notification.transactionAmount);
  const settled = pushKoboLimbs(values, notification.settledAmount);
  const fee = pushKoboLimbs(values, notification.feeAmount);
  const vat = pushKoboLimbs(values, notification.vatAmount);
  values.push(transaction || settled || fee || vat ? 1 : null);
  return values;
}

// The last time read and its milliseconds: the deliveries of one batch mostly carry the same second.
let lastTime = '';
let lastMs = Number.NaN;

/** An ISO 8601 time (with its offset) as milliseconds since the epoch. */
function eventMs(time: string): number {
  if (time !== lastTime) {
    lastMs = Date.parse(time);
    lastTime = time;
  }
  return lastMs;
}

// SQLite's sum() of no value (every row NULL) is NULL: no notification counted carries the amount.
const KOBO_SUMS = `count(*) AS count, ${AMOUNTS.map((amount) => `sum(${amount}_kobo_hi) AS ${amount}_hi, sum(${amount}_kobo_lo) AS ${amount}_lo`).join(', ')}`;
// The text of each amount that has no kobo columns, and only that.
const BEYOND_KOBO = `event_ms, ${AMOUNTS.map((amount) => `CASE WHEN ${amount}_kobo_lo IS NULL THEN ${amount} END AS ${amount}`).join(', ')}`;
const IN_RANGE = 'event_ms >= ? AND event_ms < ?';

/**
 * The account-condition slot of each variant of a read. A caller's several accounts come as one
 * JSON array parameter, each account found through its own index entries.
 */
const ACCOUNT_CONDITION: Record<AccountKind, string> = {
  all: '',
  one: 'account_number = ? AND ',
  several: 'account_number IN (SELECT value FROM json_each(?)) AND ',
};

/** A read's three statements from its text with an account-condition slot (`account`); the account's `?` is where the slot is. */
export function prepareVariants(database: DatabaseSync, text: (account: string) => string): Record<AccountKind, StatementSync> {
  return byAccountKind((kind) => database.prepare(text(ACCOUNT_CONDITION[kind])));
}

/** The statements of summaries and time-ranged pages. */
export function prepareSummaryStatements(database: DatabaseSync) {
  const bigInts = (statement: StatementSync) => {
    // Sums past 2^53 arrive as BigInt, never rounded to a double.
    statement.setReadBigInts(true);
    return statement;
  };
  const sums = (account: string) => `SELECT ${KOBO_SUMS} FROM collection_notifications WHERE ${account}${IN_RANGE}`;
  const beyond = (account: string) =>
    `SELECT ${BEYOND_KOBO} FROM collection_notifications WHERE amounts_beyond_kobo = 1 AND ${account}${IN_RANGE}`;
  // A page of [from, to): the range's index alone (seq is in every index) picks the page's seqs,
  // then only those rows are read; it costs what the range holds, as a summary of it does. Walking
  // seq instead would first skip every newer row outside the range.
  const page = (kind: AccountKind) =>
    database.prepare(
      `SELECT ${selectList('0')} FROM collection_notifications WHERE seq IN (
         SELECT seq FROM collection_notifications INDEXED BY ${kind === 'all' ? 'collection_notifications_time' : 'collection_notifications_account_time'}
         WHERE ${ACCOUNT_CONDITION[kind]}${IN_RANGE} AND seq < ? ORDER BY seq DESC LIMIT ?
       ) ORDER BY seq DESC`,
    );
  // A page of everything since `from`: walking seq newest first finds it at once, since what was
  // stored after `from` is (bank delays aside) at or after it. Without stats SQLite would read the
  // whole range through the time index instead, and sort it.
  const since = (kind: AccountKind) =>
    database.prepare(
      `SELECT ${selectList('0')} FROM collection_notifications ${kind === 'all' ? 'NOT INDEXED' : 'INDEXED BY collection_notifications_account_seq'}
       WHERE ${ACCOUNT_CONDITION[kind]}event_ms >= ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
    );
  return {
    daySums: byAccountKind((kind) => bigInts(database.prepare(sums(ACCOUNT_CONDITION[kind])))),
    beyondKobo: prepareVariants(database, beyond),
    newestInRange: byAccountKind(page),
    newestSince: byAccountKind(since),
  };
}

/** The statement and parameters of a time-ranged page of listNewestFirst (`from`, `to` or both given). */
export function rangedPage(
  statements: SummaryStatements,
  page: AccountFilter & { from: Date | undefined; to: Date | undefined; before: number; limit: number },
): [StatementSync, SQLInputValue[]] {
  const [read, times] = rangedRead(page, (date) => date.getTime(), Number.MIN_SAFE_INTEGER);
  const [kind, account] = accountParameter(page);
  return [statements[read][kind], [...account, ...times, page.before, page.limit]];
}

/** Which variant a filter takes and its account parameter, if any: the several accounts as one JSON array. */
export function accountParameter(filter: AccountFilter): [AccountKind, SQLInputValue[]] {
  const [kind, account] = accountsOf(filter);
  return kind === 'several' ? [kind, [JSON.stringify(account[0])]] : [kind, account];
}

export type SummaryStatements = ReturnType<typeof prepareSummaryStatements>;

/**
 * Each day's sums, read in one read transaction so every day sees the same data: per day, one
 * indexed aggregate of the kobo columns; then the rare amounts beyond kobo, added from their text.
 */
export function daySums(
  database: DatabaseSync,
  statements: SummaryStatements,
  days: readonly DayWindow[],
  filter: AccountFilter,
): DaySums[] {
  if (days.length === 0) return [];
  const [kind, account] = accountParameter(filter);
  database.exec('BEGIN');
  try {
    const sums = days.map((day) => koboSums(statements.daySums[kind].get(...account, day.from, day.to)));
    const beyond = statements.beyondKobo[kind].all(...account, days[0]!.from, days.at(-1)!.to);
    for (const row of beyond) {
      const index = days.findIndex((day) => Number(row.event_ms) < day.to);
      if (index >= 0) sums[index] = addSums(sums[index]!, { ...textSums(row), count: 0 });
    }
    return sums;
  } finally {
    database.exec('COMMIT');
  }
}

type Row = Record<string, SQLInputValue>;

function koboSums(row: Row | undefined): DaySums {
  if (row === undefined) return NO_SUMS;
  const amount = (name: (typeof AMOUNTS)[number]): ExactDecimal | null => {
    const [hi, lo] = [row[`${name}_hi`], row[`${name}_lo`]];
    return typeof hi === 'bigint' && typeof lo === 'bigint' ? { units: hi * LIMB + lo, scale: 2 } : null;
  };
  return {
    count: Number(row.count),
    transactionAmount: amount('transaction_amount'),
    settledAmount: amount('settled_amount'),
    feeAmount: amount('fee_amount'),
    vatAmount: amount('vat_amount'),
  };
}

function textSums(row: Row): Omit<DaySums, 'count'> {
  const amount = (value: SQLInputValue): ExactDecimal | null => (typeof value === 'string' ? parseDecimal(value) : null);
  return {
    transactionAmount: amount(row.transaction_amount ?? null),
    settledAmount: amount(row.settled_amount ?? null),
    feeAmount: amount(row.fee_amount ?? null),
    vatAmount: amount(row.vat_amount ?? null),
  };
}
