-- Confirmation with the bank (ops 15 and 16), kept on each notification, and the queue of those
-- that wait for it.
--
-- source: WEBHOOK (a delivery) or RECONCILED (the bank's record, imported by reconciliation).
-- confirmation_status: PENDING until the bank has answered, then CONFIRMED, MISMATCHED or
-- NOT_AT_BANK for good; UNCHECKED when confirmation is off. Every row stored before this migration
-- is UNCHECKED: the migration asks the bank nothing. checked_at is when the answer was recorded;
-- differences the fields that differ (a JSON array of the contract's names), null until decided;
-- acknowledged_by_bank the bank's notification_acknowledgement (0, 1, or null until it answered).
--
-- The queue: confirmation_due_ms is when a PENDING row may next be claimed (epoch milliseconds; 0,
-- at once, for a new row), moved forward by a claim (the lease a replica holds while it asks the
-- bank) and by a deferral (the backoff while the bank is unavailable); confirmation_attempts counts
-- the claims. Each column is added with a constant default: no row is rewritten. The CHECKs read
-- every row once to test them.
ALTER TABLE collection_notifications ADD COLUMN source TEXT NOT NULL DEFAULT 'WEBHOOK' CHECK (source IN ('WEBHOOK', 'RECONCILED'));
ALTER TABLE collection_notifications ADD COLUMN confirmation_status TEXT NOT NULL DEFAULT 'UNCHECKED'
  CHECK (confirmation_status IN ('PENDING', 'CONFIRMED', 'MISMATCHED', 'NOT_AT_BANK', 'UNCHECKED'));
ALTER TABLE collection_notifications ADD COLUMN confirmation_checked_at TEXT;
ALTER TABLE collection_notifications ADD COLUMN confirmation_differences TEXT;
ALTER TABLE collection_notifications ADD COLUMN acknowledged_by_bank INTEGER CHECK (acknowledged_by_bank IN (0, 1));
ALTER TABLE collection_notifications ADD COLUMN confirmation_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE collection_notifications ADD COLUMN confirmation_due_ms INTEGER NOT NULL DEFAULT 0;

-- What waits for the bank, in log order: claims take the oldest due first, and the confirmed feed
-- finds the first PENDING position, both from this index alone. Empty while the bank keeps up.
CREATE INDEX collection_notifications_pending ON collection_notifications (seq) WHERE confirmation_status = 'PENDING';
-- A transfer looked up by the bank's sessionId (op 15's id).
CREATE INDEX collection_notifications_session ON collection_notifications (session_id);
