-- The log of confirmations, and what confirmation keeps of each ask and of each decision by hand.
--
-- collection_confirmations is what incomingTransfer(confirmed: true) follows: one row per notification
-- that became CONFIRMED (by the bank's answer, an import, or an operator), in the order the
-- confirmations were committed. seq is drawn inside the one writer's transaction, as the
-- notifications' is, so seq order is commit order and AUTOINCREMENT never reuses one. The triggers
-- write it in the transaction that confirms, whatever statement confirms (an insert of an imported
-- record, or an update), so no path can confirm without joining the log. CONFIRMED never changes
-- again: a notification is in the log at most once.
CREATE TABLE collection_confirmations (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  settlement_id TEXT NOT NULL UNIQUE,
  account_number TEXT NOT NULL
) STRICT;
-- Per-account replays of the confirmed stream, in log order.
CREATE INDEX collection_confirmations_account_log ON collection_confirmations (account_number, seq);

CREATE TRIGGER collection_confirmations_on_insert AFTER INSERT ON collection_notifications
  WHEN NEW.confirmation_status = 'CONFIRMED'
BEGIN
  INSERT INTO collection_confirmations (settlement_id, account_number) VALUES (NEW.settlement_id, NEW.account_number);
END;
CREATE TRIGGER collection_confirmations_on_update AFTER UPDATE OF confirmation_status ON collection_notifications
  WHEN NEW.confirmation_status = 'CONFIRMED' AND OLD.confirmation_status <> 'CONFIRMED'
BEGIN
  INSERT INTO collection_confirmations (settlement_id, account_number) VALUES (NEW.settlement_id, NEW.account_number);
END;

-- What was confirmed before the log existed joins it, in the notifications' order.
INSERT INTO collection_confirmations (settlement_id, account_number)
  SELECT settlement_id, account_number FROM collection_notifications WHERE confirmation_status = 'CONFIRMED' ORDER BY seq;

-- confirmation_attempts now counts asks made of the bank (it counted claims); confirmation_failures
-- the failed asks about this notification since its last answer (its own backoff, and op 15 by
-- sessionId once op 16 keeps failing); confirmation_not_found_at the first of the bank's not-found
-- answers (NOT_AT_BANK needs a second one later); decided_by and reason an operator's decision by hand.
ALTER TABLE collection_notifications ADD COLUMN confirmation_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE collection_notifications ADD COLUMN confirmation_not_found_at TEXT;
ALTER TABLE collection_notifications ADD COLUMN confirmation_decided_by TEXT;
ALTER TABLE collection_notifications ADD COLUMN confirmation_reason TEXT;
-- A row written without a status keeps the default UNCHECKED here: SQLite cannot change a column's
-- default in place, and one process writes a SQLite file at a time, so no replica of an earlier
-- release writes beside this one (on PostgreSQL, where one can, the default is PENDING).
