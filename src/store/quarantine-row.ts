// The quarantine's rows as both backends read and write them, and its page query: one text, each
// backend giving its own placeholders.
import { MAX_ID_LENGTH, type NewQuarantinedDelivery, type QuarantinedDeliveryRecord, type QuarantineKind } from '../domain/index.ts';
import type { KeepOutcome, QuarantineQuery } from './types.ts';

/** A row of `collection_quarantine` (PostgreSQL gives BIGINT as text, BYTEA as a Buffer). */
export interface QuarantineRow {
  id: number | string;
  kind: QuarantineKind;
  reason: string;
  detail: string | null;
  response_code: '01' | '02';
  received_at: string;
  session_id: string | null;
  settlement_id: string | null;
  account_number: string | null;
  raw_body: Uint8Array;
  reviewed_at: string | null;
  review_note: string | null;
  reviewed_by: string | null;
}

/** The columns a new delivery fills, in the order of `quarantineParams`. */
export const QUARANTINE_INSERT_COLUMNS = [
  'kind',
  'reason',
  'detail',
  'response_code',
  'received_at',
  'session_id',
  'settlement_id',
  'account_number',
  'raw_body',
] as const satisfies readonly (keyof QuarantineRow)[];

/** Every column, in the order every select lists them. */
export const QUARANTINE_COLUMNS = ['id', ...QUARANTINE_INSERT_COLUMNS, 'reviewed_at', 'review_note', 'reviewed_by'].join(', ');

/**
 * Text either store holds as it is: no NUL (PostgreSQL's text refuses it) and no lone surrogate
 * (its jsonb refuses the escape). The raw body, kept as bytes, needs neither.
 */
export function storableText(text: string): string;
export function storableText(text: string | null): string | null;
export function storableText(text: string | null): string | null {
  if (text === null) return null;
  const withoutNul = text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
  return withoutNul.isWellFormed() ? withoutNul : withoutNul.toWellFormed();
}

/**
 * The insert's values, in QUARANTINE_INSERT_COLUMNS order: text made storable, each id cut to
 * MAX_ID_LENGTH (the columns are indexed, and a refused delivery's ids may be anything: PostgreSQL's
 * btree would refuse an entry of a few KB that SQLite takes), the body whole, as bytes.
 */
export function quarantineParams(delivery: NewQuarantinedDelivery): (string | null | Uint8Array)[] {
  const id = (text: string | null) => (text === null ? null : text.slice(0, MAX_ID_LENGTH));
  const texts = [
    delivery.kind,
    delivery.reason,
    delivery.detail,
    delivery.responseCode,
    delivery.receivedAt,
    id(delivery.sessionId),
    id(delivery.settlementId),
    id(delivery.accountNumber),
  ].map((text) => storableText(text));
  return [...texts, delivery.rawBody];
}

/** The domain record of a stored row. */
export function toQuarantineRecord(row: QuarantineRow): QuarantinedDeliveryRecord {
  return {
    id: String(row.id),
    kind: row.kind,
    reason: row.reason,
    detail: row.detail,
    responseCode: row.response_code,
    receivedAt: row.received_at,
    sessionId: row.session_id,
    settlementId: row.settlement_id,
    accountNumber: row.account_number,
    // A Buffer from pg, a Uint8Array from node:sqlite: the same bytes either way.
    rawBody: new Uint8Array(row.raw_body.buffer, row.raw_body.byteOffset, row.raw_body.byteLength),
    reviewedAt: row.reviewed_at,
    reviewNote: row.review_note,
    reviewedBy: row.reviewed_by,
  };
}

/**
 * A page of the quarantine: the statement for the filters given (only those, so each can take its
 * index) and its values in order. `placeholder(n)` writes the n-th parameter (1-based).
 */
export function quarantinePage(query: QuarantineQuery, placeholder: (n: number) => string): { text: string; values: (string | number)[] } {
  const values: (string | number)[] = [];
  const parameter = (value: string | number) => placeholder(values.push(value));
  const conditions = [`id < ${parameter(query.before ?? Number.MAX_SAFE_INTEGER)}`];
  if (query.kind !== undefined) conditions.push(`kind = ${parameter(query.kind)}`);
  if (query.reviewed !== undefined) conditions.push(query.reviewed ? 'reviewed_at IS NOT NULL' : 'reviewed_at IS NULL');
  // received_at is written as toISOString() writes it, so text order is time order.
  if (query.from !== undefined) conditions.push(`received_at >= ${parameter(query.from.toISOString())}`);
  if (query.to !== undefined) conditions.push(`received_at < ${parameter(query.to.toISOString())}`);
  const limit = parameter(query.limit);
  return {
    text: `SELECT ${QUARANTINE_COLUMNS} FROM collection_quarantine WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT ${limit}`,
    values,
  };
}

/**
 * The deliveries kept with one of a transfer's ids, newest first: each id list found through its own
 * index, then merged. `parameter(n)` writes the n-th parameter (1-based: the settlementIds, the
 * sessionIds, the limit) and `ids(n)` the id list it holds as the backend reads a list.
 */
export function quarantineWithIds(parameter: (n: number) => string, ids: (n: number) => string): string {
  return `SELECT ${QUARANTINE_COLUMNS} FROM collection_quarantine WHERE id IN (
      SELECT id FROM collection_quarantine WHERE settlement_id IN ${ids(1)}
      UNION SELECT id FROM collection_quarantine WHERE session_id IN ${ids(2)})
    ORDER BY id DESC LIMIT ${parameter(3)}`;
}

/** A delivery's id as the store numbers it, or undefined for anything it could not have issued. */
export function quarantineId(id: string): number | undefined {
  return /^[1-9]\d{0,14}$/.test(id) ? Number(id) : undefined;
}

/**
 * Keeps `deliveries` with `keep`, one statement; when the database refuses it (`refusedStatement`),
 * keeps each half apart, and so on down to single deliveries, so one it will not take fails alone
 * and its batch-mates are kept, as the notifications' group commit writes apart (batch.ts). A part
 * that fails otherwise (the connection lost) fails as a whole; only the first attempt rejects.
 */
export async function keepApart(
  deliveries: readonly NewQuarantinedDelivery[],
  keep: (part: readonly NewQuarantinedDelivery[]) => Promise<KeepOutcome[]>,
  refusedStatement: (error: unknown) => boolean,
): Promise<KeepOutcome[]> {
  try {
    return await keep(deliveries);
  } catch (error) {
    if (deliveries.length === 1 || !refusedStatement(error)) throw error;
    const parts = [deliveries.slice(0, Math.ceil(deliveries.length / 2)), deliveries.slice(Math.ceil(deliveries.length / 2))];
    const outcomes: KeepOutcome[] = [];
    // One part after the other: their bounds are read in turn, as one statement reads them.
    for (const part of parts) {
      outcomes.push(...(await keepApart(part, keep, refusedStatement).catch((failed: unknown) => part.map(() => ({ failed })))));
    }
    return outcomes;
  }
}
