import type { CollectionNotificationRecord, NewCollectionNotification } from '../domain/index.ts';

/** A row of `collection_notifications` as both backends return it (PostgreSQL gives BIGINT as text). */
export interface NotificationRow {
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
}

type InsertColumn = Exclude<keyof NotificationRow, 'seq'>;

/** Every column but `seq`, in the order of `toInsertParams`. */
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
] as const satisfies readonly InsertColumn[];

// Fails to compile when a column is added to NotificationRow but not to INSERT_COLUMNS.
const everyColumnListed: [Exclude<InsertColumn, (typeof INSERT_COLUMNS)[number]>] extends [never] ? true : never = true;
void everyColumnListed;

/** The select list of every query: explicit, so a later migration adding a column changes no result. */
export const SELECT_LIST = ['seq', ...INSERT_COLUMNS].join(', ');

/** The insert's values, in INSERT_COLUMNS order; strings stay exactly as given. */
export function toInsertParams(notification: NewCollectionNotification): (string | null)[] {
  const row: Omit<NotificationRow, 'seq'> = {
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
  };
  return INSERT_COLUMNS.map((column) => row[column]);
}

/**
 * The record of a notification just inserted: what was sent, with the seq the database drew. Every
 * column is TEXT stored verbatim, so an insert returns only its seq, not the row back again.
 */
export function insertedRecord(notification: NewCollectionNotification, seq: number | string): CollectionNotificationRecord {
  return { seq: Number(seq), ...notification };
}

/** The domain record of a stored row. */
export function toRecord(row: NotificationRow): CollectionNotificationRecord {
  return {
    seq: Number(row.seq),
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

/** `beforeSeq` when given, else a bound above every seq. */
export function upperSeqBound(beforeSeq: number | undefined): number {
  return beforeSeq ?? Number.MAX_SAFE_INTEGER;
}
