-- Collection notifications (op 14) as received. Amounts and times are TEXT so the bank's exact strings
-- ("1500.00") survive, and raw_body keeps the request byte for byte. seq comes from an identity that
-- is only drawn under the store's insert lock, so it increases in commit order.
CREATE TABLE collection_notifications (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
);

-- Per-account pages and replays (account_number = $1 ORDER BY seq).
CREATE INDEX collection_notifications_account_seq ON collection_notifications (account_number, seq);
