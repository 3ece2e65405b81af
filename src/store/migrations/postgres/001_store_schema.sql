-- The PostgreSQL store. Later changes come as migrations numbered from 002.
--
-- Collection notifications (op 14) as received: amounts and times are TEXT, so the bank's exact
-- strings ("1500.00") survive, and raw_body keeps the request byte for byte.
--
-- Log positions: replicas insert side by side without a lock and commit in any order, so each row
-- records the transaction that wrote it (txid, its xid8), and the log is read in (txid, seq) order,
-- only below the oldest transaction still running (src/store/postgres-queries.ts says why that
-- misses nothing and repeats nothing). Evaluating txid's default assigns the transaction an id, so
-- the store's insert takes care that a row already stored never reaches it.
--
-- settlement_id and account_number are identifiers, compared for equality and never sorted for
-- people: collation "C" compares their bytes, where the database's locale would be asked at every
-- comparison their indexes make on each insert (docs/benchmarks.md, "What shapes the code").
--
-- Beside the text, what summaries and time ranges read, written by the store's insert in the same
-- statement, from the same text: each amount as numeric (whose sums are exact, and which pg hands
-- over as text), and the notification's time (transactionTime, else receivedAt) as timestamptz.
CREATE TABLE collection_notifications (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  settlement_id TEXT COLLATE "C" NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  account_number TEXT COLLATE "C" NOT NULL,
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
  event_time timestamptz NOT NULL,
  transaction_amount_numeric numeric NOT NULL,
  settled_amount_numeric numeric,
  fee_amount_numeric numeric,
  vat_amount_numeric numeric
);

-- text to timestamptz is only STABLE, since a time without an offset is read in the session's
-- TimeZone; every stored time carries its offset. A STABLE SQL function is inlined into the insert.
CREATE FUNCTION collection_event_time(transaction_time TEXT, received_at TEXT) RETURNS timestamptz
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT coalesce(transaction_time, received_at)::timestamptz $$;

-- The log read by every replica's follower: (txid, seq) > $1 AND txid < xmin ORDER BY txid, seq.
CREATE INDEX collection_notifications_log ON collection_notifications (txid, seq);
-- Per-account replays and pages in the same order.
CREATE INDEX collection_notifications_account_log ON collection_notifications (account_number, txid, seq);
-- Both covering: a summary, and the positions of a page of a range, read only the index (an
-- index-only scan), never the wide rows.
CREATE INDEX collection_notifications_account_time ON collection_notifications (account_number, event_time)
  INCLUDE (txid, seq, transaction_amount_numeric, settled_amount_numeric, fee_amount_numeric, vat_amount_numeric);
CREATE INDEX collection_notifications_time ON collection_notifications (event_time)
  INCLUDE (txid, seq, transaction_amount_numeric, settled_amount_numeric, fee_amount_numeric, vat_amount_numeric);

-- The quarantine: deliveries the webhook refused for their content (REJECTED), duplicates of a stored
-- settlementId with other money fields (CONFLICT) and rows the store refused (UNSTORABLE), apart from
-- the money records. raw_body is the request's bytes as received, whatever they are.
CREATE TABLE collection_quarantine (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('REJECTED', 'CONFLICT', 'UNSTORABLE')),
  reason TEXT NOT NULL,
  detail TEXT,
  response_code TEXT NOT NULL,
  received_at TEXT NOT NULL,
  session_id TEXT,
  settlement_id TEXT,
  account_number TEXT,
  raw_body BYTEA NOT NULL,
  reviewed_at TEXT,
  review_note TEXT,
  reviewed_by TEXT
);

-- What awaits review: counted for the bound and the gauge, and listed, without reading the rest.
CREATE INDEX collection_quarantine_unreviewed ON collection_quarantine (id) WHERE reviewed_at IS NULL;
CREATE INDEX collection_quarantine_kind ON collection_quarantine (kind, id);
CREATE INDEX collection_quarantine_received ON collection_quarantine (received_at);

-- Keeps a batch of deliveries (a JSON array of rows, each its columns' text in the insert's order,
-- the body in base64) while fewer than max_unreviewed await review; returns how many it kept, the
-- first ones. Replicas take turns on the lock, and each statement here reads what the last writer
-- committed (a fresh snapshot per statement), so the bound holds exactly.
CREATE FUNCTION collection_quarantine_keep(deliveries jsonb, max_unreviewed bigint) RETURNS bigint
  LANGUAGE plpgsql
  AS $$
DECLARE
  waiting bigint;
  kept bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(7314002);
  SELECT count(*) INTO waiting FROM (SELECT 1 FROM collection_quarantine WHERE reviewed_at IS NULL LIMIT max_unreviewed) AS unreviewed;
  INSERT INTO collection_quarantine (kind, reason, detail, response_code, received_at, session_id, settlement_id, account_number, raw_body)
    SELECT d ->> 0, d ->> 1, d ->> 2, d ->> 3, d ->> 4, d ->> 5, d ->> 6, d ->> 7, decode(d ->> 8, 'base64')
    FROM jsonb_array_elements(deliveries) WITH ORDINALITY AS u(d, position)
    WHERE position <= max_unreviewed - waiting
    ORDER BY position;
  GET DIAGNOSTICS kept = ROW_COUNT;
  RETURN kept;
END
$$;

-- Which store this is, drawn once when the store is made. Pub/sub channel names carry it, so
-- deployments on different stores that share one Redis never wake each other.
CREATE TABLE store_identity (id TEXT NOT NULL);
INSERT INTO store_identity (id) VALUES (replace(gen_random_uuid()::text, '-', ''));
