/** A collection notification as stored: the bank's webhook body (op 14), normalised. */
export interface CollectionNotificationRecord {
  /** Store-assigned position, increasing in commit order; the basis of cursors. */
  seq: number;
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
  /** The request body exactly as received. */
  rawBody: string;
}

/** What the webhook hands the store: everything but the position the store assigns. */
export type NewCollectionNotification = Omit<CollectionNotificationRecord, 'seq'>;

/** One page of `collectionNotifications`, newest first; the GraphQL connection is built from it. */
export interface CollectionNotificationPage {
  notifications: CollectionNotificationRecord[];
  hasNextPage: boolean;
}
