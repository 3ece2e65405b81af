// SQLite's side of collectionSummary, time ranges and pages by confirmation status: the columns the
// insert fills beside the text (the schema's migrations say why they look so) and the queries over them.
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import {
  CONFIRMATION_STATUSES,
  countedStatuses,
  REFUTED_STATUSES,
  type ConfirmationStatus,
  type NewCollectionNotification,
} from '../domain/index.ts';
import { accountParameter as accountsOf, byAccountKind, rangedRead, type AccountKind } from './account-variants.ts';
import { parseDecimal, type ExactDecimal } from './decimal.ts';
import { selectList } from './notification-row.ts';
import type { AccountFilter } from './core.ts';
import { NO_SUMS, addSums, statusIn, type DaySums, type DayWindow } from './summary.ts';

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

/**
 * The account-condition slot of a read with named parameters (a status page's): the account, or the
 * JSON array of several, is `:account`.
 */
const NAMED_ACCOUNT_CONDITION: Record<AccountKind, string> = {
  all: '',
  one: 'account_number = :account AND ',
  several: 'account_number IN (SELECT value FROM json_each(:account)) AND ',
};

/** The index of notifications' times each variant reads a range from; one account's and several's are by account. */
const TIME_INDEX: Record<AccountKind, string> = {
  all: 'collection_notifications_time',
  one: 'collection_notifications_account_time',
  several: 'collection_notifications_account_time',
};
/** The same of the refuted notifications alone. */
const REFUTED_INDEX: Record<AccountKind, string> = {
  all: 'collection_notifications_refuted_time',
  one: 'collection_notifications_account_refuted_time',
  several: 'collection_notifications_account_refuted_time',
};

/** The statements of summaries, time-ranged pages and pages by confirmation status. */
export function prepareSummaryStatements(database: DatabaseSync) {
  const bigInts = (statement: StatementSync) => {
    // Sums past 2^53 arrive as BigInt, never rounded to a double.
    statement.setReadBigInts(true);
    return statement;
  };
  // Each read names its index: a status condition would otherwise draw SQLite, which keeps no
  // statistics, to the index of statuses, and through it to every row of the counted ones.
  const statement = (text: (kind: AccountKind) => string) => byAccountKind((kind) => database.prepare(text(kind)));
  // The status is tested once a row, in the scan's condition: a test per sum costs more than the sums.
  const sums = (counted: string) => (kind: AccountKind) =>
    `SELECT ${KOBO_SUMS} FROM collection_notifications INDEXED BY ${TIME_INDEX[kind]}
     WHERE ${ACCOUNT_CONDITION[kind]}${IN_RANGE} AND ${counted}`;
  // What the bank refuted is rare: counted apart, from the index of those alone.
  const refuted = (kind: AccountKind) =>
    `SELECT count(*) AS refuted FROM collection_notifications INDEXED BY ${REFUTED_INDEX[kind]}
     WHERE ${ACCOUNT_CONDITION[kind]}${IN_RANGE} AND ${statusIn(REFUTED_STATUSES)}`;
  const beyond = (counted: string) => (kind: AccountKind) =>
    `SELECT ${BEYOND_KOBO} FROM collection_notifications INDEXED BY collection_notifications_beyond_kobo
     WHERE amounts_beyond_kobo = 1 AND ${counted} AND ${ACCOUNT_CONDITION[kind]}${IN_RANGE}`;
  // Each way of counting (every status the bank has not refuted, or CONFIRMED alone) as its own
  // statements, its statuses written out.
  const counting = <T>(make: (counted: string) => T) => ({
    unrefuted: make(statusIn(countedStatuses(false))),
    confirmed: make(statusIn(countedStatuses(true))),
  });
  // A page of [from, to): the range's index alone (seq and the status are in it) picks the page's
  // seqs, then only those rows are read; it costs what the range holds, as a summary of it does.
  // Walking seq instead would first skip every newer row outside the range.
  const page = (byStatus: boolean) => (kind: AccountKind) =>
    database.prepare(
      `SELECT ${selectList('0')} FROM collection_notifications WHERE seq IN (
         SELECT seq FROM collection_notifications INDEXED BY ${TIME_INDEX[kind]}
         WHERE ${ACCOUNT_CONDITION[kind]}${IN_RANGE} AND seq < ?${byStatus ? ' AND confirmation_status IN (SELECT value FROM json_each(?))' : ''}
         ORDER BY seq DESC LIMIT ?
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
  // A page by status (since `from`, or ever): each status asked for (`:PENDING`… is 1) walks its own
  // part of the log newest first, from its own index, and the page is the newest of those. A
  // status not asked for is a constant false condition, tested once before its walk would start.
  const byStatus = (kind: AccountKind) => {
    const index = {
      all: ' INDEXED BY collection_notifications_status_seq',
      one: ' INDEXED BY collection_notifications_account_status_seq',
      several: '',
    }[kind];
    const walks = CONFIRMATION_STATUSES.map(
      (status) => `SELECT seq FROM (SELECT seq FROM collection_notifications${index}
         WHERE :${status} AND confirmation_status = '${status}' AND ${NAMED_ACCOUNT_CONDITION[kind]}seq < :before AND event_ms >= :since
         ORDER BY seq DESC LIMIT :limit)`,
    );
    return database.prepare(
      `SELECT ${selectList('0')} FROM collection_notifications
       WHERE seq IN (SELECT seq FROM (${walks.join(' UNION ALL ')}) ORDER BY seq DESC LIMIT :limit) ORDER BY seq DESC`,
    );
  };
  return {
    daySums: counting((counted) => byAccountKind((kind) => bigInts(database.prepare(sums(counted)(kind))))),
    refuted: statement(refuted),
    beyondKobo: counting((counted) => statement(beyond(counted))),
    newestInRange: byAccountKind(page(false)),
    newestInRangeByStatus: byAccountKind(page(true)),
    newestSince: byAccountKind(since),
    newestByStatus: byAccountKind(byStatus),
  };
}

/** What a page of listNewestFirst asks, its bound as the seq it stays below. */
type PageQuery = AccountFilter & {
  from: Date | undefined;
  to: Date | undefined;
  statuses: readonly ConfirmationStatus[] | undefined;
  before: number;
  limit: number;
};

/** The statement and parameters of a time-ranged page of listNewestFirst (`from`, `to` or both given). */
export function rangedPage(statements: SummaryStatements, page: PageQuery): [StatementSync, SQLInputValue[]] {
  const [read, times] = rangedRead(page, (date) => date.getTime(), Number.MIN_SAFE_INTEGER);
  const [kind, account] = accountParameter(page);
  if (read === 'newestInRange' && page.statuses !== undefined) {
    return [statements.newestInRangeByStatus[kind], [...account, ...times, page.before, JSON.stringify(page.statuses), page.limit]];
  }
  return [statements[read][kind], [...account, ...times, page.before, page.limit]];
}

/** The statement and named parameters of a page by confirmation status, since `from` or ever. */
export function statusPage(
  statements: SummaryStatements,
  page: PageQuery & { statuses: readonly ConfirmationStatus[] },
): [StatementSync, Record<string, SQLInputValue>] {
  const [kind, account] = accountParameter(page);
  const asked = Object.fromEntries(CONFIRMATION_STATUSES.map((status) => [status, page.statuses.includes(status) ? 1 : 0]));
  const since = page.from === undefined ? Number.MIN_SAFE_INTEGER : page.from.getTime();
  return [
    statements.newestByStatus[kind],
    { ...asked, ...(kind === 'all' ? {} : { account: account[0]! }), before: page.before, since, limit: page.limit },
  ];
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
 * Counted: the statuses `countedStatuses(confirmed)` names; the refuted are counted apart, per day
 * from the index of those alone.
 */
export function daySums(
  database: DatabaseSync,
  statements: SummaryStatements,
  days: readonly DayWindow[],
  filter: AccountFilter,
  confirmed: boolean,
): DaySums[] {
  if (days.length === 0) return [];
  const [kind, account] = accountParameter(filter);
  const counting = confirmed ? 'confirmed' : 'unrefuted';
  database.exec('BEGIN');
  try {
    const sums = days.map((day) => ({
      ...koboSums(statements.daySums[counting][kind].get(...account, day.from, day.to)),
      refuted: Number(statements.refuted[kind].get(...account, day.from, day.to)?.refuted ?? 0),
    }));
    const beyond = statements.beyondKobo[counting][kind].all(...account, days[0]!.from, days.at(-1)!.to);
    for (const row of beyond) {
      const index = days.findIndex((day) => Number(row.event_ms) < day.to);
      if (index >= 0) sums[index] = addSums(sums[index]!, { ...textSums(row), count: 0, refuted: 0 });
    }
    return sums;
  } finally {
    database.exec('COMMIT');
  }
}

type Row = Record<string, SQLInputValue>;

function koboSums(row: Row | undefined): Omit<DaySums, 'refuted'> {
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

function textSums(row: Row): Omit<DaySums, 'count' | 'refuted'> {
  const amount = (value: SQLInputValue): ExactDecimal | null => (typeof value === 'string' ? parseDecimal(value) : null);
  return {
    transactionAmount: amount(row.transaction_amount ?? null),
    settledAmount: amount(row.settled_amount ?? null),
    feeAmount: amount(row.fee_amount ?? null),
    vatAmount: amount(row.vat_amount ?? null),
  };
}
