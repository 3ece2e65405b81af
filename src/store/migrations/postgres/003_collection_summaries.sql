-- collectionSummary and time ranges. Each amount also as numeric, whose sums are exact, and the
-- notification's time (transactionTime, else receivedAt) as timestamptz, for ranges. Generated
-- from the TEXT columns, which stay the record: the insert stays as it is, and adding them fills
-- every row already stored (the table is rewritten once, holding its lock while it is).

-- text to timestamptz is only STABLE, since a time without an offset is read in the session's
-- TimeZone. Every stored time carries its offset (transactionTime as read in BANK_TIMEZONE,
-- receivedAt in UTC), so here the cast depends on nothing else: IMMUTABLE is true of these values.
CREATE FUNCTION collection_event_time(transaction_time TEXT, received_at TEXT) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT coalesce(transaction_time, received_at)::timestamptz $$;

ALTER TABLE collection_notifications
  ADD COLUMN event_time timestamptz GENERATED ALWAYS AS (collection_event_time(transaction_time, received_at)) STORED,
  ADD COLUMN transaction_amount_numeric numeric GENERATED ALWAYS AS (transaction_amount::numeric) STORED,
  ADD COLUMN settled_amount_numeric numeric GENERATED ALWAYS AS (settled_amount::numeric) STORED,
  ADD COLUMN fee_amount_numeric numeric GENERATED ALWAYS AS (fee_amount::numeric) STORED,
  ADD COLUMN vat_amount_numeric numeric GENERATED ALWAYS AS (vat_amount::numeric) STORED;

-- Both covering: a summary, and the positions of a page of a range, read only the index (an
-- index-only scan), never the wide rows.
CREATE INDEX collection_notifications_account_time ON collection_notifications (account_number, event_time)
  INCLUDE (txid, seq, transaction_amount_numeric, settled_amount_numeric, fee_amount_numeric, vat_amount_numeric);
CREATE INDEX collection_notifications_time ON collection_notifications (event_time)
  INCLUDE (txid, seq, transaction_amount_numeric, settled_amount_numeric, fee_amount_numeric, vat_amount_numeric);
