// What one ask of the bank about one notification comes to: a verdict (the bank's record of that
// transfer, or its second not-found answer), or a retry. Shared by the confirmer and an operator's
// RECHECK, so both read the bank the same way.
import {
  bankDifferences,
  type BankTransactionRecord,
  type CollectionNotificationRecord,
  type ConfirmationOutcome,
  type ConfirmationRetry,
} from '../domain/index.ts';

/** A failed ask about one notification is asked again after this, doubling with each failure in a row… */
export const FIRST_RETRY_MS = 30_000;
/** …up to this. */
export const MAX_RETRY_MS = 15 * 60_000;
/** Failed asks by settlementId (op 16) after which the bank is asked by sessionId (op 15) instead. */
export const ASKS_BEFORE_SESSION_ID = 3;

/** What the bank's answer to one ask came to. */
export type AskResult = { kind: 'outcome'; outcome: ConfirmationOutcome } | { kind: 'retry'; retry: ConfirmationRetry };

/**
 * The bank's answer about `record` (its record of the transfer, or `null` for its documented
 * not-found answer) as a verdict or a retry. A not-found answer is a verdict only when it is the
 * second one at least `recheckMs` after the first: the bank's verify service may lag its notifier,
 * and calling a genuine transfer forged pages someone and withholds the customer's value.
 */
export function verdictOf(
  record: CollectionNotificationRecord,
  atBank: BankTransactionRecord | null,
  { now, recheckMs }: { now: number; recheckMs: number },
): AskResult {
  const { settlementId } = record;
  const checkedAt = new Date(now).toISOString();
  if (atBank !== null) {
    const differences = bankDifferences(record, atBank);
    const status = differences.length > 0 ? 'MISMATCHED' : 'CONFIRMED';
    return { kind: 'outcome', outcome: { settlementId, status, checkedAt, differences, acknowledgedByBank: atBank.acknowledged } };
  }
  const first = record.confirmation.status === 'PENDING' ? record.confirmation.notFoundAt : null;
  const waited = first === null ? 0 : now - Date.parse(first);
  if (first !== null && waited >= recheckMs) {
    return { kind: 'outcome', outcome: { settlementId, status: 'NOT_AT_BANK', checkedAt, differences: [], acknowledgedByBank: null } };
  }
  return { kind: 'retry', retry: { settlementId, kind: 'not-found', at: checkedAt, delayMs: Math.max(0, recheckMs - waited) } };
}

/**
 * A failed ask about one notification as a retry after its own backoff: 30 s, doubling with each
 * failure in a row, at most 15 minutes.
 */
export function failedAsk(record: CollectionNotificationRecord, now: number): ConfirmationRetry {
  const delayMs = Math.min(FIRST_RETRY_MS * 2 ** Math.min(record.confirmation.failedAsks, 20), MAX_RETRY_MS);
  return { settlementId: record.settlementId, kind: 'failed', at: new Date(now).toISOString(), delayMs };
}

/** Which of the bank's ids to ask about the notification now: its settlementId, or its sessionId once asks by that keep failing. */
export function askBy(record: CollectionNotificationRecord): 'settlementId' | 'sessionId' {
  return record.confirmation.failedAsks >= ASKS_BEFORE_SESSION_ID && record.sessionId.trim() !== '' ? 'sessionId' : 'settlementId';
}
