-- Confirmation with the bank (ops 15 and 16), kept on each notification, and the queue of those
-- that wait for it.
--
-- source: WEBHOOK (a delivery) or RECONCILED (the bank's record, imported by reconciliation).
-- confirmation_status: PENDING until the bank has answered, then CONFIRMED, MISMATCHED or
-- NOT_AT_BANK for good; UNCHECKED when confirmation is off. Every row stored before this migration
-- is UNCHECKED: the migration asks the bank nothing. checked_at is when the answer was recorded;
-- differences the fields that differ (a JSON array of the contract's names), null until decided;
-- acknowledged_by_bank the bank's notification_acknowledgement, null until it answered.
--
-- The queue: confirmation_due_at is when a PENDING row may next be claimed ('-infinity', at once,
-- for a new row), moved forward by a claim (the lease a replica holds while it asks the bank; claims
-- skip rows another replica has locked, so two never take one) and by a deferral (the backoff while
-- the bank is unavailable), on the database's clock, which every replica shares; confirmation_attempts
-- counts the claims.
--
-- A column added with a constant default rewrites no row (PostgreSQL 11+). The CHECKs are added NOT
-- VALID: every later insert and update is checked, and the rows already stored, which all hold the
-- defaults, are not read to prove it.
ALTER TABLE collection_notifications
  ADD COLUMN source TEXT NOT NULL DEFAULT 'WEBHOOK',
  ADD COLUMN confirmation_status TEXT NOT NULL DEFAULT 'UNCHECKED',
  ADD COLUMN confirmation_checked_at TEXT,
  ADD COLUMN confirmation_differences TEXT,
  ADD COLUMN acknowledged_by_bank BOOLEAN,
  ADD COLUMN confirmation_attempts INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN confirmation_due_at timestamptz NOT NULL DEFAULT '-infinity',
  ADD CONSTRAINT collection_notifications_source CHECK (source IN ('WEBHOOK', 'RECONCILED')) NOT VALID,
  ADD CONSTRAINT collection_notifications_confirmation_status
    CHECK (confirmation_status IN ('PENDING', 'CONFIRMED', 'MISMATCHED', 'NOT_AT_BANK', 'UNCHECKED')) NOT VALID;

-- What waits for the bank, in log order: claims take the oldest due first, and the confirmed feed
-- finds the first PENDING position, both from this index. Empty while the bank keeps up.
CREATE INDEX collection_notifications_pending ON collection_notifications (txid, seq) WHERE confirmation_status = 'PENDING';
-- A transfer looked up by the bank's sessionId (op 15's id).
CREATE INDEX collection_notifications_session ON collection_notifications (session_id);
