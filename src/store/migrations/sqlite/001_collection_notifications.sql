-- Collection notifications (op 14) as received. Amounts and times are TEXT so the bank's exact strings
-- ("1500.00") survive; STRICT refuses any other type. AUTOINCREMENT: a seq is never reused, even after
-- the newest row is deleted, so cursors never point at a different notification.
CREATE TABLE collection_notifications (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  settlement_id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  account_number TEXT NOT NULL,
  transaction_amount TEXT NOT NULL,
  settled_amount TEXT,
  fee_amount TEXT,
  vat_amount TEXT,
  currency TEXT,
  narration TEXT,
  initiation_tran_ref TEXT,
  source_account_number TEXT,
  source_account_name TEXT,
  source_bank_name TEXT,
  channel_id TEXT,
  transaction_time TEXT,
  received_at TEXT NOT NULL,
  raw_body TEXT NOT NULL
) STRICT;

-- Per-account pages and replays (account_number = ? ORDER BY seq).
CREATE INDEX collection_notifications_account_seq ON collection_notifications (account_number, seq);
