import type { Confirmation, ConfirmationStatus, NewConfirmation, NotificationSource } from './confirmation.ts';

/**
 * A place in the store's log of notifications: the log is ordered by `txid`, then `seq`.
 * - `txid`: the id of the database transaction that wrote the notification (PostgreSQL's `xid8`);
 *   0 where one writer commits at a time (SQLite) and for rows written before positions had it.
 * - `seq`: the number the store drew for it, unique, increasing within a transaction.
 * Ordering by `seq` alone would not do on PostgreSQL: replicas' transactions draw seqs concurrently
 * and commit in any order (the store's `listAfter` says why the pair is safe to follow).
 */
export interface LogPosition {
  readonly txid: number;
  readonly seq: number;
}

/** The position before every notification. */
export const START_OF_LOG: LogPosition = Object.freeze({ txid: 0, seq: 0 });

/** Negative, zero or positive as `a` comes before, at, or after `b` in the log. */
export function comparePositions(a: LogPosition, b: LogPosition): number {
  return a.txid - b.txid || a.seq - b.seq;
}

/**
 * The longest id (settlementId, sessionId) stored or indexed: the bank's are some 30 characters, and
 * 64 of any kind fit every index of either store, so neither refuses a row the other takes.
 */
export const MAX_ID_LENGTH = 64;

/** A collection notification as stored: the bank's webhook body (op 14), normalised, and its confirmation with the bank. */
export interface CollectionNotificationRecord {
  /** Its place in the store's log; the basis of cursors and of live delivery's order. */
  position: LogPosition;
  settlementId: string;
  /** The request's sessionId, `''` when the bank sent none. */
  sessionId: string;
  accountNumber: string;
  /** Exact decimal strings as the bank sent them (e.g. "1500.00"), never floats. */
  transactionAmount: string;
  settledAmount: string | null;
  feeAmount: string | null;
  vatAmount: string | null;
  currency: string | null;
  /** The bank's `tranRemarks`. */
  narration: string | null;
  initiationTranRef: string | null;
  sourceAccountNumber: string | null;
  sourceAccountName: string | null;
  sourceBankName: string | null;
  channelId: string | null;
  /** `tranDateTime` read in the bank's zone, ISO 8601 with offset; null when unreadable. */
  transactionTime: string | null;
  /** When we accepted it, ISO 8601 with offset. */
  receivedAt: string;
  /** The request body as received, read as UTF-8: bytes that are not UTF-8 read as U+FFFD. */
  rawBody: string;
  /**
   * The request's bytes where `rawBody` cannot give them back (the body is not well-formed UTF-8);
   * null or absent where they are `rawBody`'s UTF-8, as for nearly every body.
   */
  rawBodyBytes?: Uint8Array | null | undefined;
  /** `WEBHOOK` for a delivery; `RECONCILED` for the bank's record imported by reconciliation. */
  source: NotificationSource;
  /** What the bank's collection service said of it, and when (see domain/confirmation.ts). */
  confirmation: Confirmation;
}

/**
 * What is handed to the store: everything but the position the store assigns. Without `source` it
 * is a `WEBHOOK` delivery; without `confirmation`, `UNCHECKED`. The webhook gives `PENDING` when
 * confirmation is on; an import gives its decided confirmation.
 */
export type NewCollectionNotification = Omit<CollectionNotificationRecord, 'position' | 'source' | 'confirmation'> & {
  source?: NotificationSource | undefined;
  confirmation?: NewConfirmation | undefined;
};

/** A CONFIRMED notification as the log of confirmations hands it out: with its position in that log. */
export interface ConfirmedNotificationRecord extends CollectionNotificationRecord {
  /** Where its confirmation stands in the log of confirmations (the confirmed stream's cursor), not its place in the store's log. */
  confirmedAt: LogPosition;
}

/** One page of `collectionNotifications`, newest first; the GraphQL connection is built from it. */
export interface CollectionNotificationPage {
  notifications: CollectionNotificationRecord[];
  hasNextPage: boolean;
}

/**
 * Exact totals of the notifications counted: sums as decimal strings written with two decimals
 * (kobo), or more only where the exact value needs them. `transactionAmount` is "0.00" when nothing
 * was counted; each other sum is null when no notification counted carries that amount.
 */
export interface CollectionTotals {
  /** How many notifications were counted. */
  count: number;
  /** How many in the range were left out because the bank refuted them (REFUTED_STATUSES). */
  refutedCount: number;
  transactionAmount: string;
  settledAmount: string | null;
  feeAmount: string | null;
  vatAmount: string | null;
}

/** The totals of one bank-local calendar day, within the range asked for. */
export interface CollectionDayTotals extends CollectionTotals {
  /** The day in the bank's zone, ISO 8601 `YYYY-MM-DD`. */
  date: string;
  /** Where the day's part of the range begins and ends ([from, to)), ISO 8601 with the bank's offset. */
  from: string;
  to: string;
}

/** `collectionSummary`: the totals of a time range, and of each bank-local day in it, in order. */
export interface CollectionSummaryRecord extends CollectionTotals {
  days: CollectionDayTotals[];
}

/** Every confirmation status, in the schema's order. */
export const CONFIRMATION_STATUSES: readonly ConfirmationStatus[] = ['PENDING', 'CONFIRMED', 'MISMATCHED', 'NOT_AT_BANK', 'UNCHECKED'];

/** The statuses of money the bank refuted: a summary never counts them. */
export const REFUTED_STATUSES: readonly ConfirmationStatus[] = ['MISMATCHED', 'NOT_AT_BANK'];

/**
 * The statuses a summary counts: every one the bank has not refuted, or with `confirmed` only
 * `CONFIRMED` (what an app may give value on).
 */
export function countedStatuses(confirmed: boolean): readonly ConfirmationStatus[] {
  return confirmed ? ['CONFIRMED'] : CONFIRMATION_STATUSES.filter((status) => !REFUTED_STATUSES.includes(status));
}
