-- The log of confirmations, and what confirmation keeps of each ask and of each decision by hand.
--
-- collection_confirmations is what incomingTransfer(confirmed: true) follows: one row per notification
-- that became CONFIRMED (by the bank's answer, an import, or an operator). Confirming transactions
-- commit in any order on several replicas, so the log is positioned and read exactly as the
-- notifications' is: each row records the transaction that wrote it (txid), and the log is read in
-- (txid, seq) order below the oldest transaction still running (src/store/postgres-queries.ts says
-- why that misses nothing and repeats nothing), so a confirmation committed late is never skipped.
-- The triggers write it in the transaction that confirms, whatever statement confirms (an insert of
-- an imported record, or an update, a replica of an earlier release's included), so no path can
-- confirm without joining the log. CONFIRMED never changes again: a notification is in it at most once.
CREATE TABLE collection_confirmations (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  settlement_id TEXT COLLATE "C" NOT NULL UNIQUE,
  account_number TEXT COLLATE "C" NOT NULL
);
CREATE INDEX collection_confirmations_log ON collection_confirmations (txid, seq);
-- Per-account replays of the confirmed stream, in log order.
CREATE INDEX collection_confirmations_account_log ON collection_confirmations (account_number, txid, seq);

CREATE FUNCTION collection_confirmations_append() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  INSERT INTO collection_confirmations (settlement_id, account_number) VALUES (NEW.settlement_id, NEW.account_number);
  RETURN NULL;
END
$$;
CREATE TRIGGER collection_confirmations_on_insert AFTER INSERT ON collection_notifications
  FOR EACH ROW WHEN (NEW.confirmation_status = 'CONFIRMED') EXECUTE FUNCTION collection_confirmations_append();
CREATE TRIGGER collection_confirmations_on_update AFTER UPDATE OF confirmation_status ON collection_notifications
  FOR EACH ROW WHEN (NEW.confirmation_status = 'CONFIRMED' AND OLD.confirmation_status <> 'CONFIRMED')
  EXECUTE FUNCTION collection_confirmations_append();

-- What was confirmed before the log existed joins it, in the notifications' order.
INSERT INTO collection_confirmations (settlement_id, account_number)
  SELECT settlement_id, account_number FROM collection_notifications WHERE confirmation_status = 'CONFIRMED' ORDER BY txid, seq;

-- confirmation_attempts now counts asks made of the bank (it counted claims); confirmation_failures
-- the failed asks about this notification since its last answer (its own backoff, and op 15 by
-- sessionId once op 16 keeps failing); confirmation_not_found_at the first of the bank's not-found
-- answers (NOT_AT_BANK needs a second one later); decided_by and reason an operator's decision by hand.
-- A row written without a status (by a replica of a release before confirmation, during a rolling
-- upgrade) is PENDING: it is confirmed like any other. Only a replica with confirmation off writes
-- UNCHECKED, explicitly. Constant defaults: no row is rewritten.
--
-- fillfactor: new pages are filled to 85%, so a claim's lease (confirmation_due_at, in no index) is
-- written beside its row (a HOT update) instead of as a new version in every index of the table.
ALTER TABLE collection_notifications
  SET (fillfactor = 85),
  ALTER COLUMN confirmation_status SET DEFAULT 'PENDING',
  ADD COLUMN confirmation_failures INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN confirmation_not_found_at TEXT,
  ADD COLUMN confirmation_decided_by TEXT,
  ADD COLUMN confirmation_reason TEXT;
