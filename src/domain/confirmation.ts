/**
 * Confirmation with the bank: what the bank's collection service says of a stored notification
 * (ops 15/16), kept on it. A notification enters the store `PENDING` (confirmation on), `UNCHECKED`
 * (off, or stored before confirmation existed) or already decided (a reconciled import); once decided,
 * its status never changes.
 */
import { decimalValue } from './amount.ts';

/** Where a stored notification came from: the bank's webhook (op 14), or the bank's own record imported by reconciliation. */
export type NotificationSource = 'WEBHOOK' | 'RECONCILED';

export type ConfirmationStatus = 'PENDING' | 'CONFIRMED' | 'MISMATCHED' | 'NOT_AT_BANK' | 'UNCHECKED';

/** The statuses the bank's answer decides; a notification in one of them stays in it. */
export type DecidedStatus = 'CONFIRMED' | 'MISMATCHED' | 'NOT_AT_BANK';

export const DECIDED_STATUSES: readonly DecidedStatus[] = ['CONFIRMED', 'MISMATCHED', 'NOT_AT_BANK'];

/** A notification's confirmation as stored. */
export interface Confirmation {
  status: ConfirmationStatus;
  /** When the bank's answer was recorded, ISO 8601; null until decided. */
  checkedAt: string | null;
  /** The compared fields in which the bank's record differs (MISMATCHED), by the contract's names; empty otherwise. */
  differences: readonly string[];
  /** The bank's `notification_acknowledgement`: it holds our `00` for this transfer; null until the bank has answered. */
  acknowledgedByBank: boolean | null;
}

/** Not checked with the bank: confirmation is off, or the notification was stored before it existed. */
export const UNCHECKED: Confirmation = Object.freeze({
  status: 'UNCHECKED',
  checkedAt: null,
  differences: Object.freeze([]),
  acknowledgedByBank: null,
});

/** Stored, waiting for the bank's answer. */
export const PENDING: Confirmation = Object.freeze({
  status: 'PENDING',
  checkedAt: null,
  differences: Object.freeze([]),
  acknowledgedByBank: null,
});

/** A decision to record over a PENDING notification. */
export interface ConfirmationOutcome {
  settlementId: string;
  status: DecidedStatus;
  checkedAt: string;
  differences: readonly string[];
  acknowledgedByBank: boolean | null;
}

/**
 * The fields on which our record and the bank's must agree, by the contract's names: the ids, where
 * the money went, in what, and the four amounts.
 */
export const COMPARED_FIELDS = [
  'settlementId',
  'sessionId',
  'accountNumber',
  'currency',
  'transactionAmount',
  'settledAmount',
  'feeAmount',
  'vatAmount',
] as const;
export type ComparedField = (typeof COMPARED_FIELDS)[number];

/** What is compared of a record, ours or the bank's. */
export type ComparedFields = {
  [K in ComparedField]: K extends 'settlementId' | 'sessionId' | 'accountNumber' | 'transactionAmount' ? string : string | null;
};

const COMPARED_AMOUNTS: ReadonlySet<ComparedField> = new Set(['transactionAmount', 'settledAmount', 'feeAmount', 'vatAmount']);

/**
 * The compared fields in which the bank's record differs from ours, in COMPARED_FIELDS order: amounts
 * as exact decimals (`1000.0` is `"1000.00"`), the currency in any case, ids and accounts exactly. An
 * amount one side holds and the other lacks differs: none of them is optional in the bank's record.
 */
export function bankDifferences(ours: ComparedFields, atBank: ComparedFields): ComparedField[] {
  return COMPARED_FIELDS.filter((field) => {
    const [a, b] = [ours[field], atBank[field]];
    if (a === b) return false;
    if (a === null || b === null) return true;
    if (COMPARED_AMOUNTS.has(field)) return decimalValue(a) !== decimalValue(b);
    return field === 'currency' ? a.toUpperCase() !== b.toUpperCase() : true;
  });
}
