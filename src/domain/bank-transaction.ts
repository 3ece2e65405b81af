/** What the bank's collection service says about a transfer (ops 15 to 17), in our names. */

/**
 * A transfer as the bank's collection service holds it (op 15 by sessionId, op 16 by settlementId).
 * Field names follow `CollectionNotificationRecord`, so the two can be compared field by field.
 */
export interface BankTransactionRecord {
  /** As the bank holds it; `''` when it holds none. */
  sessionId: string;
  settlementId: string;
  accountNumber: string;
  /** Exact decimal text, read from the answer's text (a JSON number keeps its digits: `1000.0`). */
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
  sourceBankCode: string | null;
  sourceBankName: string | null;
  channelId: string | null;
  /** `tranDateTime` read in the bank's zone, ISO 8601 with offset; null when unreadable. */
  transactionTime: string | null;
  /** `settlementDateTime` read in the bank's zone, ISO 8601 with offset; null when unreadable. */
  settledAt: string | null;
  /** `notification_acknowledgement`: the bank holds our `00` for this transfer. */
  acknowledged: boolean;
  /** The answer's JSON object, amounts as their decimal text (never floats). */
  raw: Record<string, unknown>;
  /** The answer's body exactly as received. */
  rawBody: string;
}

/** The bank's answer to a request to send a notification again (op 17). */
export interface RepushRecord {
  /** `responseCode` `00`: the bank has queued the notification for the webhook. */
  queued: boolean;
  responseCode: string;
  responseMessage: string | null;
}
