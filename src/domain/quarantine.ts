/**
 * What the webhook refuses, or takes for a conflict, is kept apart from the money records: the bank
 * treats `02` as final and `01` as done, so this copy is the only record of it.
 * - `REJECTED`: signed, and refused for its content (`02`).
 * - `CONFLICT`: the settlementId of a stored notification with other money fields (`01`; the
 *   stored notification stays the money record).
 * - `UNSTORABLE`: refused by the store for a reason no check foresaw (`02`: a retry cannot help it).
 */
export type QuarantineKind = 'REJECTED' | 'CONFLICT' | 'UNSTORABLE';

/** A delivery to keep in the quarantine: as received, and why. */
export interface NewQuarantinedDelivery {
  kind: QuarantineKind;
  /** Why, from a closed set (a metric label): a rejection reason, `conflicting_duplicate`, `store_refused_row`. */
  reason: string;
  /** What the reason leaves out: the money fields that differ from the stored record, the store's message. */
  detail: string | null;
  /** The reply the bank got. */
  responseCode: '01' | '02';
  /** When it arrived: ISO 8601 in UTC, to the millisecond. */
  receivedAt: string;
  /** The ids the body holds, where they could be read. */
  sessionId: string | null;
  settlementId: string | null;
  accountNumber: string | null;
  /** The request body, byte for byte. */
  rawBody: Uint8Array;
}

/** A quarantined delivery as stored, with its review once an operator has recorded one. */
export interface QuarantinedDeliveryRecord extends NewQuarantinedDelivery {
  /** The store's number for it: a decimal string, larger for later deliveries. */
  id: string;
  /** When it was reviewed: ISO 8601 in UTC; null while it awaits review. */
  reviewedAt: string | null;
  reviewNote: string | null;
  /** The `sub` of the reviewer's token; null when authorization was off. */
  reviewedBy: string | null;
}

/** One page of `quarantinedDeliveries`, newest first. */
export interface QuarantinePage {
  deliveries: QuarantinedDeliveryRecord[];
  hasNextPage: boolean;
}

/** What an operator records of a quarantined delivery. */
export interface QuarantineReview {
  id: string;
  note: string;
  reviewedBy: string | null;
  /** ISO 8601 in UTC. */
  reviewedAt: string;
}
