-- The summary columns of migration 003 become plain columns, written by the store's insert in the
-- same statement, from the same text, by the same casts. As generated columns they cost every row a
-- call of collection_event_time, which PostgreSQL runs as a SQL function per row (a generated
-- column's expression is never inlined). DROP EXPRESSION keeps every value already stored and
-- rewrites no row.
ALTER TABLE collection_notifications
  ALTER COLUMN event_time DROP EXPRESSION,
  ALTER COLUMN transaction_amount_numeric DROP EXPRESSION,
  ALTER COLUMN settled_amount_numeric DROP EXPRESSION,
  ALTER COLUMN fee_amount_numeric DROP EXPRESSION,
  ALTER COLUMN vat_amount_numeric DROP EXPRESSION;

-- No generated column uses it any more, so it may say what it is: STABLE, like the cast it wraps.
-- The store's insert calls it, and a STABLE SQL function is inlined into the statement.
CREATE OR REPLACE FUNCTION collection_event_time(transaction_time TEXT, received_at TEXT) RETURNS timestamptz
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT coalesce(transaction_time, received_at)::timestamptz $$;

-- A writer that leaves them out (a replica of an earlier release, still running during an upgrade)
-- gets them filled here, as the generated columns did. The store's own insert always writes
-- event_time and transaction_amount_numeric (never NULL once written), so the trigger's condition
-- is false for it and the function is never called on its path.
CREATE FUNCTION collection_fill_summary_columns() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  NEW.event_time := collection_event_time(NEW.transaction_time, NEW.received_at);
  NEW.transaction_amount_numeric := NEW.transaction_amount::numeric;
  NEW.settled_amount_numeric := NEW.settled_amount::numeric;
  NEW.fee_amount_numeric := NEW.fee_amount::numeric;
  NEW.vat_amount_numeric := NEW.vat_amount::numeric;
  RETURN NEW;
END
$$;

CREATE TRIGGER collection_notifications_summary_columns
  BEFORE INSERT ON collection_notifications
  FOR EACH ROW WHEN (NEW.event_time IS NULL OR NEW.transaction_amount_numeric IS NULL)
  EXECUTE FUNCTION collection_fill_summary_columns();
