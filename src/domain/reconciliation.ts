/**
 * Reconciliation with the bank: a transfer as the bank's collection service holds it (ops 15/16),
 * set beside the money record stored here, and what became of one that never arrived.
 */
import type { BankTransactionRecord } from './bank-transaction.ts';
import { bankDifferences, type ComparedField } from './confirmation.ts';
import type { CollectionNotificationRecord } from './notification.ts';
import type { QuarantinedDeliveryRecord } from './quarantine.ts';

/**
 * What the two sides hold of one transfer: the same (`MATCHED`), other values (`MISMATCHED`), ours
 * alone (`NOT_AT_BANK`), the bank's alone (`MISSING_HERE`), or neither (`UNKNOWN`).
 */
export type ReconcileVerdict = 'MATCHED' | 'MISMATCHED' | 'NOT_AT_BANK' | 'MISSING_HERE' | 'UNKNOWN';

/** What `reconcileCollections` does with a transfer the bank holds and the store does not. */
export type RecoverMode = 'NONE' | 'REPUSH' | 'IMPORT';

/** Which of a transfer's ids a check asks the bank by: op 15 for a sessionId, op 16 for a settlementId. */
export type TransferIdKind = 'sessionId' | 'settlementId';

/** One transfer asked about, by one of its ids. */
export interface TransferId {
  kind: TransferIdKind;
  id: string;
}

/** The verdict on what the bank and the store hold, and the compared fields that differ (MISMATCHED only). */
export interface Comparison {
  verdict: ReconcileVerdict;
  differences: ComparedField[];
}

/** Sets the bank's record (null: it knows none) beside the stored one (null: none is stored). */
export function compareWithBank(atBank: BankTransactionRecord | null, stored: CollectionNotificationRecord | null): Comparison {
  if (atBank === null) return { verdict: stored === null ? 'UNKNOWN' : 'NOT_AT_BANK', differences: [] };
  if (stored === null) return { verdict: 'MISSING_HERE', differences: [] };
  const differences = bankDifferences(stored, atBank);
  return { verdict: differences.length > 0 ? 'MISMATCHED' : 'MATCHED', differences };
}

/** `bankTransaction`'s answer: the verdict, both sides, and what the webhook refused of the transfer. */
export interface BankTransactionCheckRecord extends Comparison {
  atBank: BankTransactionRecord | null;
  stored: CollectionNotificationRecord | null;
  /** The quarantined deliveries with the transfer's settlementId or sessionId, newest first. */
  quarantined: QuarantinedDeliveryRecord[];
}

/**
 * One id of `reconcileCollections`: its verdict, or (`verdict` null) the error that kept the bank
 * from being asked; `recovered` when a money record of a `MISSING_HERE` one is stored by the time
 * the call answers (delivered again and stored through the webhook, or imported).
 */
export interface ReconcileItemRecord {
  id: string;
  verdict: ReconcileVerdict | null;
  differences: string[];
  recovered: boolean;
  /** `CODE: message`: why the bank could not be asked, or why a recovery did not happen. */
  error: string | null;
  /** A `MISSING_HERE` one's quarantined deliveries (by either id), newest first; empty otherwise. */
  quarantined: QuarantinedDeliveryRecord[];
}

/** `reconcileCollections`' answer: the counts (the verdicts and `failed` add up to `checked`) and each id's line. */
export interface ReconcileReportRecord {
  checked: number;
  matched: number;
  missingHere: number;
  mismatched: number;
  notAtBank: number;
  unknown: number;
  /** Of the `MISSING_HERE` ones, how many have a money record stored now (REPUSH delivered and stored, or IMPORT). */
  recovered: number;
  /** Ids the bank could not be asked about: no verdict. */
  failed: number;
  items: ReconcileItemRecord[];
}

const COUNTED = {
  MATCHED: 'matched',
  MISMATCHED: 'mismatched',
  NOT_AT_BANK: 'notAtBank',
  MISSING_HERE: 'missingHere',
  UNKNOWN: 'unknown',
} as const;

/** The report of `items`, counted. */
export function reconcileReport(items: ReconcileItemRecord[]): ReconcileReportRecord {
  const report: ReconcileReportRecord = {
    checked: items.length,
    matched: 0,
    missingHere: 0,
    mismatched: 0,
    notAtBank: 0,
    unknown: 0,
    recovered: 0,
    failed: 0,
    items,
  };
  for (const item of items) {
    if (item.verdict === null) report.failed += 1;
    else report[COUNTED[item.verdict]] += 1;
    if (item.recovered) report.recovered += 1;
  }
  return report;
}
