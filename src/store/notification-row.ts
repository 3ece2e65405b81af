import {
  NOTHING_ASKED,
  UNCHECKED,
  type CollectionNotificationRecord,
  type Confirmation,
  type ConfirmationStatus,
  type LogPosition,
  type NewCollectionNotification,
  type NotificationSource,
} from '../domain/index.ts';

/**
 * A row of `collection_notifications` as both backends return it (PostgreSQL gives BIGINT and
 * xid8 as text; SQLite, which has no txid column, selects 0 in its place).
 */
export interface NotificationRow {
  txid: number | string;
  seq: number | string;
  settlement_id: string;
  session_id: string;
  account_number: string;
  transaction_amount: string;
  settled_amount: string | null;
  fee_amount: string | null;
  vat_amount: string | null;
  currency: string | null;
  narration: string | null;
  initiation_tran_ref: string | null;
  source_account_number: string | null;
  source_account_name: string | null;
  source_bank_name: string | null;
  channel_id: string | null;
  transaction_time: string | null;
  received_at: string;
  raw_body: string;
  /** The body's bytes where raw_body cannot give them back; null otherwise (src/domain/notification.ts). */
  raw_body_bytes: Uint8Array | null;
  source: string;
  confirmation_status: string;
  confirmation_checked_at: string | null;
  /** A JSON array of field names; null until decided. */
  confirmation_differences: string | null;
  /** SQLite's 0 or 1, PostgreSQL's boolean; null until the bank answered. */
  acknowledged_by_bank: number | boolean | null;
  // What confirmation keeps of its asks and of a decision by hand: written by the confirmation
  // queue, never by an insert (their defaults: nothing asked yet).
  confirmation_attempts: number;
  confirmation_failures: number;
  confirmation_not_found_at: string | null;
  confirmation_decided_by: string | null;
  confirmation_reason: string | null;
}

/** The columns confirmation writes after the insert (see NotificationRow). */
const ASK_COLUMNS = [
  'confirmation_attempts',
  'confirmation_failures',
  'confirmation_not_found_at',
  'confirmation_decided_by',
  'confirmation_reason',
] as const;

type InsertColumn = Exclude<keyof NotificationRow, 'seq' | 'txid' | (typeof ASK_COLUMNS)[number]>;

/** Every column but the position's, which the database fills in, in the order of `toInsertParams`. */
export const INSERT_COLUMNS = [
  'settlement_id',
  'session_id',
  'account_number',
  'transaction_amount',
  'settled_amount',
  'fee_amount',
  'vat_amount',
  'currency',
  'narration',
  'initiation_tran_ref',
  'source_account_number',
  'source_account_name',
  'source_bank_name',
  'channel_id',
  'transaction_time',
  'received_at',
  'raw_body',
  'raw_body_bytes',
  'source',
  'confirmation_status',
  'confirmation_checked_at',
  'confirmation_differences',
  'acknowledged_by_bank',
] as const satisfies readonly InsertColumn[];

/** The columns of bytes among INSERT_COLUMNS (BLOB, BYTEA); every other is text. */
export const BYTES_COLUMNS: ReadonlySet<(typeof INSERT_COLUMNS)[number]> = new Set(['raw_body_bytes']);

// Fails to compile when a column is added to NotificationRow but not to INSERT_COLUMNS.
const everyColumnListed: [Exclude<InsertColumn, (typeof INSERT_COLUMNS)[number]>] extends [never] ? true : never = true;
void everyColumnListed;

/**
 * The select list of every query, given what stands for the txid: explicit, so a later migration
 * adding a column changes no result.
 */
export function selectList(txid: string): string {
  return [`${txid} AS txid`, 'seq', ...INSERT_COLUMNS, ...ASK_COLUMNS].join(', ');
}

/** A column's value as the insert writes it. */
export type InsertValue = string | number | Uint8Array | null;

/** The insert's values, in INSERT_COLUMNS order; strings and bytes stay exactly as given. */
export function toInsertParams(notification: NewCollectionNotification): InsertValue[] {
  const confirmation = notification.confirmation ?? UNCHECKED;
  const row: Pick<NotificationRow, InsertColumn> = {
    settlement_id: notification.settlementId,
    session_id: notification.sessionId,
    account_number: notification.accountNumber,
    transaction_amount: notification.transactionAmount,
    settled_amount: notification.settledAmount,
    fee_amount: notification.feeAmount,
    vat_amount: notification.vatAmount,
    currency: notification.currency,
    narration: notification.narration,
    initiation_tran_ref: notification.initiationTranRef,
    source_account_number: notification.sourceAccountNumber,
    source_account_name: notification.sourceAccountName,
    source_bank_name: notification.sourceBankName,
    channel_id: notification.channelId,
    transaction_time: notification.transactionTime,
    received_at: notification.receivedAt,
    raw_body: notification.rawBody,
    raw_body_bytes: notification.rawBodyBytes ?? null,
    source: notification.source ?? 'WEBHOOK',
    confirmation_status: confirmation.status,
    confirmation_checked_at: confirmation.checkedAt,
    confirmation_differences: differencesColumn(confirmation),
    acknowledged_by_bank: confirmation.acknowledgedByBank === null ? null : Number(confirmation.acknowledgedByBank),
  };
  return INSERT_COLUMNS.map((column) => row[column] as InsertValue);
}

/**
 * The record of a notification just inserted: what was sent, at the position the database gave it.
 * Every column is TEXT stored verbatim, so an insert returns only its position, not the row again.
 */
export function insertedRecord(notification: NewCollectionNotification, position: LogPosition): CollectionNotificationRecord {
  const { confirmation = UNCHECKED, source = 'WEBHOOK', ...fields } = notification;
  return {
    position,
    ...fields,
    rawBodyBytes: notification.rawBodyBytes ?? null,
    source,
    confirmation: { ...NOTHING_ASKED, ...confirmation, differences: [...confirmation.differences] },
  };
}

/** The differences column: a JSON array once decided, null while nothing was compared. */
export function differencesColumn(confirmation: Pick<Confirmation, 'status' | 'differences'>): string | null {
  return confirmation.status === 'PENDING' || confirmation.status === 'UNCHECKED' ? null : JSON.stringify(confirmation.differences);
}

/** A row's confirmation as the domain reads it. */
function confirmationOf(row: NotificationRow): Confirmation {
  const differences = row.confirmation_differences === null ? [] : (JSON.parse(row.confirmation_differences) as string[]);
  const acknowledged = row.acknowledged_by_bank;
  return {
    status: row.confirmation_status as ConfirmationStatus,
    checkedAt: row.confirmation_checked_at,
    differences,
    acknowledgedByBank: acknowledged === null ? null : acknowledged === true || acknowledged === 1,
    attempts: Number(row.confirmation_attempts),
    failedAsks: Number(row.confirmation_failures),
    notFoundAt: row.confirmation_not_found_at,
    decidedBy: row.confirmation_decided_by,
    reason: row.confirmation_reason,
  };
}

/**
 * A position as the database gives it. An xid8 is a 64-bit count of transactions; a JavaScript
 * number holds it exactly up to 2^53, which a database writing a million transactions a second
 * reaches in about 285 years: past that, reads fail rather than misorder the log.
 */
export function toPosition(txid: number | string, seq: number | string): LogPosition {
  const position = { txid: Number(txid), seq: Number(seq) };
  if (!Number.isSafeInteger(position.txid) || !Number.isSafeInteger(position.seq)) {
    throw new RangeError(`log position (${txid}, ${seq}) is beyond what this release can hold exactly`);
  }
  return position;
}

/** The domain record of a stored row. */
export function toRecord(row: NotificationRow): CollectionNotificationRecord {
  return {
    position: toPosition(row.txid, row.seq),
    settlementId: row.settlement_id,
    sessionId: row.session_id,
    accountNumber: row.account_number,
    transactionAmount: row.transaction_amount,
    settledAmount: row.settled_amount,
    feeAmount: row.fee_amount,
    vatAmount: row.vat_amount,
    currency: row.currency,
    narration: row.narration,
    initiationTranRef: row.initiation_tran_ref,
    sourceAccountNumber: row.source_account_number,
    sourceAccountName: row.source_account_name,
    sourceBankName: row.source_bank_name,
    channelId: row.channel_id,
    transactionTime: row.transaction_time,
    receivedAt: row.received_at,
    rawBody: row.raw_body,
    // A Buffer from pg, a Uint8Array from node:sqlite: the same bytes either way.
    rawBodyBytes:
      row.raw_body_bytes === null
        ? null
        : new Uint8Array(row.raw_body_bytes.buffer, row.raw_body_bytes.byteOffset, row.raw_body_bytes.byteLength),
    source: row.source as NotificationSource,
    confirmation: confirmationOf(row),
  };
}

/** getMany's answer: one entry per requested id, in order, null where none is stored. */
export function inRequestedOrder(
  settlementIds: readonly string[],
  found: readonly CollectionNotificationRecord[],
): (CollectionNotificationRecord | null)[] {
  const byId = new Map(found.map((record) => [record.settlementId, record]));
  return settlementIds.map((id) => byId.get(id) ?? null);
}

/** Refuses a limit that is not a whole number ≥ 0 (SQLite would read a negative one as "no limit"). */
export function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`limit must be a whole number ≥ 0, got ${limit}`);
  return limit;
}
