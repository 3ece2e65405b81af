/**
 * Confirmation with the bank: what the bank's collection service says of a stored notification
 * (ops 15/16), kept on it. A notification enters the store `PENDING` (confirmation on), `UNCHECKED`
 * (off, or stored before confirmation existed) or already decided (a reconciled import). Once decided,
 * a status changes only by a later answer of the bank asked for by an operator (`RECHECK`), and
 * `CONFIRMED` never: value may have been given on it.
 */
import { decimalValue } from './amount.ts';

/** Where a stored notification came from: the bank's webhook (op 14), or the bank's own record imported by reconciliation. */
export type NotificationSource = 'WEBHOOK' | 'RECONCILED';

export type ConfirmationStatus = 'PENDING' | 'CONFIRMED' | 'MISMATCHED' | 'NOT_AT_BANK' | 'UNCHECKED';

/** The statuses the bank's answer decides; a notification in one of them stays in it. */
export type DecidedStatus = 'CONFIRMED' | 'MISMATCHED' | 'NOT_AT_BANK';

export const DECIDED_STATUSES: readonly DecidedStatus[] = ['CONFIRMED', 'MISMATCHED', 'NOT_AT_BANK'];

/** A confirmation as a notification is stored with it: the status, and the bank's answer where one decided it. */
export interface NewConfirmation {
  status: ConfirmationStatus;
  /** When the bank's answer (or an operator's decision) was recorded, ISO 8601; null until decided. */
  checkedAt: string | null;
  /** The compared fields in which the bank's record differs (MISMATCHED), by the contract's names; empty otherwise. */
  differences: readonly string[];
  /** The bank's `notification_acknowledgement`: it holds our `00` for this transfer; null until the bank has answered. */
  acknowledgedByBank: boolean | null;
}

/** A notification's confirmation as stored: what decided it, and what the asks so far came to. */
export interface Confirmation extends NewConfirmation {
  /** Asks made of the bank about it so far (ops 15 and 16). */
  attempts: number;
  /** Failed asks about it since the bank last answered one: its own backoff, and op 15 once op 16 keeps failing. */
  failedAsks: number;
  /** When the bank first answered that it does not know the transfer; `NOT_AT_BANK` needs a second answer later. */
  notFoundAt: string | null;
  /** The operator's `sub` for a decision by hand; null where the bank's answer decided. */
  decidedBy: string | null;
  /** The operator's reason for a decision by hand. */
  reason: string | null;
}

/** Not checked with the bank: confirmation is off, or the notification was stored before it existed. */
export const UNCHECKED: NewConfirmation = Object.freeze({
  status: 'UNCHECKED',
  checkedAt: null,
  differences: Object.freeze([]),
  acknowledgedByBank: null,
});

/** Stored, waiting for the bank's answer. */
export const PENDING: NewConfirmation = Object.freeze({
  status: 'PENDING',
  checkedAt: null,
  differences: Object.freeze([]),
  acknowledgedByBank: null,
});

/** What a stored confirmation holds beside `NewConfirmation` before anything was asked or decided. */
export const NOTHING_ASKED = Object.freeze({ attempts: 0, failedAsks: 0, notFoundAt: null, decidedBy: null, reason: null });

/** A decision of the bank's to record over a PENDING notification (or, on an operator's RECHECK, over any not CONFIRMED). */
export interface ConfirmationOutcome {
  settlementId: string;
  status: DecidedStatus;
  checkedAt: string;
  differences: readonly string[];
  acknowledgedByBank: boolean | null;
}

/** An ask of the bank that decided nothing: the notification stays (or, reopened, becomes) PENDING, asked again after `delayMs`. */
export interface ConfirmationRetry {
  settlementId: string;
  delayMs: number;
  /**
   * `failed`: the ask failed (an error, an answer that cannot be read), counted in its failed asks;
   * `not-found`: the bank answered that it does not know the transfer, the first such answer kept.
   */
  kind: 'failed' | 'not-found';
  /** When the ask was answered or failed, ISO 8601. */
  at: string;
  /** Also over MISMATCHED or UNCHECKED (an operator's RECHECK the bank answered not found): it becomes PENDING. */
  reopen?: boolean | undefined;
}

/** The decisions an operator may make by hand. */
export type ManualDecision = 'CONFIRMED' | 'NOT_AT_BANK';

/** An operator's decision over a PENDING notification. */
export interface OperatorDecision {
  settlementId: string;
  status: ManualDecision;
  /** The operator's `sub`. */
  decidedBy: string;
  reason: string;
  decidedAt: string;
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
 * SessionIds are compared trimmed, and not at all where ours is empty (stored without one).
 */
export function bankDifferences(ours: ComparedFields, atBank: ComparedFields): ComparedField[] {
  return COMPARED_FIELDS.filter((field) => {
    if (field === 'sessionId') {
      // Trimmed; one stored without a sessionId is compared without it.
      const [a, b] = [ours.sessionId.trim(), atBank.sessionId.trim()];
      return a !== '' && a !== b;
    }
    const [a, b] = [ours[field], atBank[field]];
    if (a === b) return false;
    if (a === null || b === null) return true;
    if (COMPARED_AMOUNTS.has(field)) return decimalValue(a) !== decimalValue(b);
    return field === 'currency' ? a.toUpperCase() !== b.toUpperCase() : true;
  });
}
