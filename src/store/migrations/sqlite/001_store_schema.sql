-- The SQLite store. Later changes come as migrations numbered from 002.
--
-- Collection notifications (op 14) as received: amounts and times are TEXT, so the bank's exact
-- strings ("1500.00") survive, and raw_body keeps the request byte for byte; STRICT refuses any other
-- type. seq is the rowid, drawn inside the one writer's transaction, so seq order is commit order;
-- AUTOINCREMENT never reuses one, even after the newest row is deleted, so a cursor never points at
-- a different notification.
--
-- Beside the text, what summaries and time ranges read, written by the store's insert from the same
-- text: event_ms, the notification's time (transactionTime, else receivedAt) in epoch milliseconds,
-- and each amount in kobo split into two integers below 10^9 (hi * 10^9 + lo). SQLite has no decimal
-- type and its integer SUM fails past 2^63; summed in SQL these stay exact, never a float, and
-- cannot overflow before some 9 billion rows. An amount finer than kobo, or of 10^16 naira or more,
-- gets no kobo columns and marks its row amounts_beyond_kobo = 1: the store adds those few exactly
-- from their text.
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
  raw_body TEXT NOT NULL,
  event_ms INTEGER,
  transaction_amount_kobo_hi INTEGER,
  transaction_amount_kobo_lo INTEGER,
  settled_amount_kobo_hi INTEGER,
  settled_amount_kobo_lo INTEGER,
  fee_amount_kobo_hi INTEGER,
  fee_amount_kobo_lo INTEGER,
  vat_amount_kobo_hi INTEGER,
  vat_amount_kobo_lo INTEGER,
  amounts_beyond_kobo INTEGER
) STRICT;

-- Per-account pages and replays (account_number = ? ORDER BY seq).
CREATE INDEX collection_notifications_account_seq ON collection_notifications (account_number, seq);
-- One account's range: a day of a busy account is a few thousand rows, read from the table.
CREATE INDEX collection_notifications_account_time ON collection_notifications (account_number, event_ms);
-- Every account's range: covering, so a month's sums read only this index, never the wide rows.
CREATE INDEX collection_notifications_time ON collection_notifications (
  event_ms,
  transaction_amount_kobo_hi, transaction_amount_kobo_lo, settled_amount_kobo_hi, settled_amount_kobo_lo,
  fee_amount_kobo_hi, fee_amount_kobo_lo, vat_amount_kobo_hi, vat_amount_kobo_lo
);
-- The rare rows whose amounts are added from their text; empty while the bank sends kobo.
CREATE INDEX collection_notifications_beyond_kobo ON collection_notifications (event_ms) WHERE amounts_beyond_kobo = 1;

-- The quarantine: deliveries the webhook refused for their content (REJECTED), duplicates of a stored
-- settlementId with other money fields (CONFLICT) and rows the store refused (UNSTORABLE), apart from
-- the money records. raw_body is the request's bytes as received, whatever they are.
CREATE TABLE collection_quarantine (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('REJECTED', 'CONFLICT', 'UNSTORABLE')),
  reason TEXT NOT NULL,
  detail TEXT,
  response_code TEXT NOT NULL,
  received_at TEXT NOT NULL,
  session_id TEXT,
  settlement_id TEXT,
  account_number TEXT,
  raw_body BLOB NOT NULL,
  reviewed_at TEXT,
  review_note TEXT,
  reviewed_by TEXT
) STRICT;

-- What awaits review: counted for the bound and the gauge, and listed, without reading the rest.
CREATE INDEX collection_quarantine_unreviewed ON collection_quarantine (id) WHERE reviewed_at IS NULL;
CREATE INDEX collection_quarantine_kind ON collection_quarantine (kind, id);
CREATE INDEX collection_quarantine_received ON collection_quarantine (received_at);

-- Which store this is, drawn once when the store is made. Pub/sub channel names carry it, so
-- deployments on different stores that share one Redis never wake each other.
CREATE TABLE store_identity (id TEXT NOT NULL) STRICT;
INSERT INTO store_identity (id) VALUES (lower(hex(randomblob(16))));
