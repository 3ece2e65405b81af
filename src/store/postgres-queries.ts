// The PostgreSQL store's statements: the batch insert, and the log read in (txid, seq) order below
// the oldest transaction still running.
import type { LogPosition } from '../domain/index.ts';
import { ACCOUNT_KINDS, accountParameter, byAccountKind, rangedRead, type AccountKind, type RangedRead } from './account-variants.ts';
import type { AccountFilter } from './core.ts';
import { BYTES_COLUMNS, INSERT_COLUMNS, selectList } from './notification-row.ts';

/**
 * The settled part of the log: rows whose writing transaction is older than the oldest one still
 * running when the statement's snapshot was taken. Why reading it in (txid, seq) order misses
 * nothing and repeats nothing, although replicas insert without a lock and commit in any order:
 *
 * 1. Every transaction with an id below the snapshot's xmin has ended; those that committed are
 *    all visible to that snapshot, and every transaction yet to write gets a larger id. So the rows
 *    with txid < xmin are a final set: none can be added to it later.
 * 2. A follower at position P has handed out exactly the rows at or below P, and every one of them
 *    is settled. A read returns the rows above P with txid < xmin, in (txid, seq) order, the first n.
 *    Each row at or below the last one returned, P', has txid <= P'.txid < xmin, so by (1) it is
 *    final and was either at or below P or in this read. So again exactly the rows at or below P'
 *    have been handed out, and all are final: no later commit lands below P' (no skip), and the next
 *    read starts above it (no repeat). A row still unsettled is above P' and is read once it settles.
 *
 * Ordering by seq alone, with the same `txid < xmin` filter, is not enough: a batch of two rows
 * in transaction A (txid 100) draws seqs 5 and 7 while transaction B (txid 101) draws seq 6. Should
 * A commit while B runs, a reader sees 5 and 7 (txid 100 < xmin 101) and moves past 7; when B then
 * commits, its 6 lies below a position already read and is never handed out. Ordered by txid
 * first, B's (101, 6) comes after A's (100, 7).
 *
 * A transaction anywhere on the server that holds an id (has written something) and stays open
 * keeps xmin, and so live delivery, back until it ends; reads are never wrong, only later.
 */
const SETTLED = 'txid < pg_snapshot_xmin(pg_current_snapshot())';
// Above every xid8: the "before" of a first page.
export const AFTER_EVERY_TXID = '18446744073709551615';
// The largest seq: with AFTER_EVERY_TXID, a bound past every position.
const LAST_SEQ = '9223372036854775807';

/** A log read's range from parameter $n on: positions in ($n, $n+1] .. ($n+2, $n+3]. */
const logRange = (n: number) => `(txid, seq) > ($${n}::xid8, $${n + 1}::bigint) AND (txid, seq) <= ($${n + 2}::xid8, $${n + 3}::bigint)`;

/** The parameters of a log read's range (see logRange): after, through (none: past every position). */
export function rangeParams({ after, through }: { after: LogPosition; through: LogPosition | undefined }): unknown[] {
  return [...positionParams(after), ...(through ? positionParams(through) : [AFTER_EVERY_TXID, LAST_SEQ])];
}

const FROM = `SELECT ${selectList('txid')} FROM collection_notifications`;

/** The account-condition slot of each variant; `n` is the account's parameter number. */
const ACCOUNT_CONDITION: Record<AccountKind, (n: number) => string> = {
  all: () => '',
  one: (n) => `account_number = $${n} AND `,
  // A caller's several accounts, as one text[] parameter where the single-account statement takes one.
  several: (n) => `account_number = ANY($${n}::text[]) AND `,
};

/** The highest parameter number ($n) in `sql`, 0 when it has none. */
const lastParameter = (sql: string) => Math.max(0, ...Array.from(sql.matchAll(/\$(\d+)/g), (match) => Number(match[1])));

/**
 * A statement's three variants from its text with an account-condition slot (`account`: empty, or a
 * condition followed by AND). The account is the parameter after the statement's own, so every
 * variant takes the same values, the account's appended.
 */
export function accountVariants(text: (account: string) => string): Record<AccountKind, string> {
  const n = lastParameter(text('')) + 1;
  return byAccountKind((kind) => text(ACCOUNT_CONDITION[kind](n)));
}

const VARIANT_SUFFIX = { all: '', one: 'OfAccount', several: 'OfAccounts' } as const;
type VariantName<Read extends string> = `${Read}${(typeof VARIANT_SUFFIX)[AccountKind]}`;

/** The statement name of `read`'s variant for `kind`: `newest`, `newestOfAccount`, `newestOfAccounts`. */
// The compiler widens the template to string without the assertion; the linter's checker does not.
// oxlint-disable-next-line typescript/no-unnecessary-type-assertion
const variantName = <Read extends string>(read: Read, kind: AccountKind) => `${read}${VARIANT_SUFFIX[kind]}` as VariantName<Read>;

/** Every read's variants (see accountVariants), by statement name. */
export function withAccountVariants<Read extends string>(
  reads: Record<Read, (account: string) => string>,
): Record<VariantName<Read>, string> {
  const entries = Object.entries<(account: string) => string>(reads).flatMap(([read, text]) => {
    const variants = accountVariants(text);
    return ACCOUNT_KINDS.map((kind) => [variantName(read, kind), variants[kind]] as const);
  });
  return Object.fromEntries(entries) as Record<VariantName<Read>, string>;
}

/** The statement name and values of `read`'s variant for `filter`: the read's own values, then the account's. */
export function forAccounts<Read extends string>(read: Read, filter: AccountFilter, values: readonly unknown[]) {
  const [kind, account] = accountParameter(filter);
  return { name: variantName(read, kind), values: [...values, ...account] };
}

/**
 * A page of [from, to): the range's positions first (materialized, so the planner reads them through
 * the time index, which carries them and their status), then the page's rows. It costs what the
 * range holds, as a summary of it does; left to itself, with a LIMIT, the planner would walk the log
 * from the newest and skip every row after the range. By status: only those in $6.
 */
const inRange = (byStatus: boolean) => (account: string) =>
  `WITH in_range AS MATERIALIZED (
      SELECT txid, seq FROM collection_notifications
      WHERE ${account}event_time >= $1 AND event_time < $2 AND (txid, seq) < ($3::xid8, $4::bigint) AND ${SETTLED}${
        byStatus ? ' AND confirmation_status = ANY($6::text[])' : ''
      }
    )
    ${FROM} WHERE seq IN (SELECT seq FROM in_range ORDER BY txid DESC, seq DESC LIMIT $5) ORDER BY txid DESC, seq DESC`;

/**
 * A page by status (since $2, or ever: '-infinity'): each status in $1 walks its own part of the
 * log newest first, from its own index, and the page is the newest of those, so a rare status is
 * found without reading past the others.
 */
const byStatus = (account: string) =>
  `SELECT ${selectList('txid')} FROM (
      SELECT p.txid AS page_txid, p.seq AS page_seq FROM unnest($1::text[]) AS s(status) CROSS JOIN LATERAL (
        SELECT txid, seq FROM collection_notifications
        WHERE ${account}confirmation_status = s.status AND event_time >= $2 AND (txid, seq) < ($3::xid8, $4::bigint) AND ${SETTLED}
        ORDER BY txid DESC, seq DESC LIMIT $5
      ) AS p
      ORDER BY p.txid DESC, p.seq DESC LIMIT $5
    ) AS page JOIN collection_notifications ON seq = page_seq ORDER BY page_txid DESC, page_seq DESC`;

/**
 * The table's size from the catalog, never a count(*): its files with indexes and TOAST, and rows
 * estimated as the planner does, the tuples per page of the last VACUUM or ANALYZE times the pages
 * the table has now. Before the first of those (a young table), the statistics' live-tuple count.
 */
const SIZE_SQL = `SELECT pg_total_relation_size(c.oid)::bigint AS bytes,
    (CASE WHEN c.relpages > 0 AND c.reltuples >= 0
      THEN c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::bigint)
      ELSE pg_stat_get_live_tuples(c.oid) END)::bigint AS rows
  FROM pg_class c WHERE c.oid = 'collection_notifications'::regclass`;

/** A column of the batch's row `r` (a JSON array of the INSERT_COLUMNS values, in order), as text. */
const field = (column: (typeof INSERT_COLUMNS)[number]) => `(u.r ->> ${INSERT_COLUMNS.indexOf(column)})`;
/** A column's value from the batch's row: bytes come in base64, the bank's acknowledgement as 0 or 1. */
const columnValue = (column: (typeof INSERT_COLUMNS)[number]) =>
  BYTES_COLUMNS.has(column)
    ? `decode(${field(column)}, 'base64')`
    : column === 'acknowledged_by_bank'
      ? `${field(column)}::boolean`
      : field(column);

/**
 * What summaries and time ranges read, computed from the same text as the record:
 * the notification's time, and each amount as numeric.
 */
const SUMMARY_VALUES = {
  event_time: `collection_event_time(${field('transaction_time')}, ${field('received_at')})`,
  transaction_amount_numeric: `${field('transaction_amount')}::numeric`,
  settled_amount_numeric: `${field('settled_amount')}::numeric`,
  fee_amount_numeric: `${field('fee_amount')}::numeric`,
  vat_amount_numeric: `${field('vat_amount')}::numeric`,
};

/** The reads of the settled log, each with its account-condition slot; QUERIES holds their variants. */
const ACCOUNT_READS = {
  newest: (account: string) =>
    `${FROM} WHERE ${account}(txid, seq) < ($1::xid8, $2::bigint) AND ${SETTLED} ORDER BY txid DESC, seq DESC LIMIT $3`,
  after: (account: string) => `${FROM} WHERE ${account}${logRange(1)} AND ${SETTLED} ORDER BY txid, seq LIMIT $5`,
  // The log of confirmations, read as the notifications' is (the same SETTLED rule over its own
  // txid): the page's positions from its indexes first, then only their notifications.
  confirmedAfter: (account: string) =>
    `SELECT c.confirmed_txid, c.confirmed_seq, ${selectList('txid')}
    FROM (SELECT txid AS confirmed_txid, seq AS confirmed_seq, settlement_id AS confirmed_id FROM collection_confirmations
      WHERE ${account}${logRange(1)} AND ${SETTLED} ORDER BY txid, seq LIMIT $5) AS c
    JOIN collection_notifications ON settlement_id = c.confirmed_id
    ORDER BY c.confirmed_txid, c.confirmed_seq`,
  // Pages of a time range (collectionNotifications' from/to), in the same order over the same settled log.
  newestInRange: inRange(false),
  newestInRangeByStatus: inRange(true),
  // Pages by confirmation status, outside a range.
  newestByStatus: byStatus,
  // Everything since `from`: the planner walks the log newest first, or the time index when `from` is recent.
  newestSince: (account: string) =>
    `${FROM} WHERE ${account}event_time >= $1 AND (txid, seq) < ($2::xid8, $3::bigint) AND ${SETTLED} ORDER BY txid DESC, seq DESC LIMIT $4`,
} satisfies Record<
  'newest' | 'after' | 'confirmedAfter' | RangedRead | 'newestInRangeByStatus' | 'newestByStatus',
  (account: string) => string
>;
export type AccountRead = keyof typeof ACCOUNT_READS;

export const QUERIES = {
  // A whole batch in one statement, its own transaction (one round trip, one commit), as one jsonb
  // parameter: an array of rows, each an array of its columns' text (jsonb reaches an element of an
  // array without scanning it). One parameter whatever the batch's size, and one plan serves all.
  // Rows already stored are dropped before the insert looks at them: a row that reaches it gets
  // its column defaults, and evaluating them (txid's pg_current_xact_id(), or seq's nextval now
  // and then) gives the transaction an id, and so a commit record and a WAL flush. A batch of
  // bank retries only (all 01) thus costs no flush. The check is a scalar subquery, one probe of
  // the unique index per delivery: NOT EXISTS would become an anti-join, which a plan made while
  // the table looked small (before its first ANALYZE) hashes by reading the whole table, per batch.
  // ON CONFLICT still settles races with other replicas, whose rows are not visible yet. The
  // statement's snapshot xmin comes back too: every transaction below it had ended, so the log is
  // settled up to there (see SETTLED).
  insert: `INSERT INTO collection_notifications (${[...INSERT_COLUMNS, ...Object.keys(SUMMARY_VALUES)].join(', ')})
    SELECT ${[...INSERT_COLUMNS.map(columnValue), ...Object.values(SUMMARY_VALUES)].join(', ')}
    FROM jsonb_array_elements($1::jsonb) AS u(r)
    WHERE (SELECT true FROM collection_notifications c WHERE c.settlement_id = ${field('settlement_id')}) IS NULL
    ON CONFLICT (settlement_id) DO NOTHING
    RETURNING txid, seq, settlement_id, pg_snapshot_xmin(pg_current_snapshot()) AS horizon`,
  getMany: `${FROM} WHERE settlement_id = ANY($1::text[])`,
  // The first in the log, settled or not, as getMany reads.
  bySession: `${FROM} WHERE session_id = $1 ORDER BY txid, seq LIMIT 1`,
  settledHead: `SELECT txid, seq FROM collection_notifications WHERE ${SETTLED} ORDER BY txid DESC, seq DESC LIMIT 1`,
  committedHead: 'SELECT txid, seq FROM collection_notifications ORDER BY txid DESC, seq DESC LIMIT 1',
  confirmedSettledHead: `SELECT txid, seq FROM collection_confirmations WHERE ${SETTLED} ORDER BY txid DESC, seq DESC LIMIT 1`,
  confirmedCommittedHead: 'SELECT txid, seq FROM collection_confirmations ORDER BY txid DESC, seq DESC LIMIT 1',
  ...withAccountVariants(ACCOUNT_READS),
  // The table's size (NotificationStore.size).
  size: SIZE_SQL,
};
export type QueryName = keyof typeof QUERIES;

/**
 * The read and values of a page of listNewestFirst (`from`, `to` or `statuses` given), without the
 * account's: by status outside a range, else a time range, by status within it.
 */
export function filteredPage({
  from,
  to,
  statuses,
  bound,
  limit,
}: {
  from: Date | undefined;
  to: Date | undefined;
  statuses: readonly string[] | undefined;
  bound: unknown[];
  limit: number;
}): { read: AccountRead; values: unknown[] } {
  const time = (date: Date) => date.toISOString();
  if (statuses !== undefined && to === undefined) {
    return { read: 'newestByStatus', values: [statuses, from === undefined ? '-infinity' : time(from), ...bound, limit] };
  }
  const [read, times] = rangedRead({ from, to }, time, '-infinity');
  if (read === 'newestInRange' && statuses !== undefined)
    return { read: 'newestInRangeByStatus', values: [...times, ...bound, limit, statuses] };
  return { read, values: [...times, ...bound, limit] };
}

/** `position` as the (txid, seq) parameters of a query. */
export const positionParams = (position: LogPosition) => [String(position.txid), position.seq];
