-- Bytes kept exactly, and the quarantine bounded by bytes as well as rows.
--
-- raw_body_bytes: the request's bytes where raw_body's text cannot give them back, i.e. where the
-- body is not well-formed UTF-8 (a Latin-1 é became U+FFFD in the text). Null otherwise, and for
-- every row stored before this migration: their bytes are their text's UTF-8. Null for nearly every
-- delivery, so the 00 path writes nothing more than before. Adding a nullable column without a
-- default rewrites nothing.
ALTER TABLE collection_notifications ADD COLUMN raw_body_bytes BYTEA;

-- What awaits review in the quarantine, kept by the database itself (the triggers below follow every
-- insert, review and delete, by the store or by hand), so the bounds QUARANTINE_MAX_ROWS and
-- QUARANTINE_MAX_BYTES are read in one row rather than counted. One row, always; it is also the lock
-- that keeps on every replica take turns on (collection_quarantine_keep).
CREATE TABLE collection_quarantine_backlog (
  only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
  unreviewed BIGINT NOT NULL,
  unreviewed_bytes BIGINT NOT NULL
);
INSERT INTO collection_quarantine_backlog (unreviewed, unreviewed_bytes)
  SELECT count(*), coalesce(sum(octet_length(raw_body)), 0) FROM collection_quarantine WHERE reviewed_at IS NULL;

-- Once per statement, from its transition tables: a batch kept in one INSERT updates the row once.
-- octet_length reads a stored body's size from its header, without reading the body.
CREATE FUNCTION collection_quarantine_backlog_follow() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  rows_delta bigint := 0;
  bytes_delta bigint := 0;
  n bigint;
  b bigint;
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    SELECT count(*), coalesce(sum(octet_length(raw_body)), 0) INTO n, b FROM added WHERE reviewed_at IS NULL;
    rows_delta := rows_delta + n;
    bytes_delta := bytes_delta + b;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    SELECT count(*), coalesce(sum(octet_length(raw_body)), 0) INTO n, b FROM removed WHERE reviewed_at IS NULL;
    rows_delta := rows_delta - n;
    bytes_delta := bytes_delta - b;
  END IF;
  IF rows_delta <> 0 OR bytes_delta <> 0 THEN
    UPDATE collection_quarantine_backlog SET unreviewed = unreviewed + rows_delta, unreviewed_bytes = unreviewed_bytes + bytes_delta;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER collection_quarantine_backlog_insert AFTER INSERT ON collection_quarantine
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION collection_quarantine_backlog_follow();
CREATE TRIGGER collection_quarantine_backlog_update AFTER UPDATE ON collection_quarantine
  REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION collection_quarantine_backlog_follow();
CREATE TRIGGER collection_quarantine_backlog_delete AFTER DELETE ON collection_quarantine
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION collection_quarantine_backlog_follow();

-- Keeps a batch of deliveries (a JSON array of rows, each its columns' text in the insert's order,
-- the body in base64, then the body's size) in order, each while the unreviewed quarantine stays
-- within max_unreviewed deliveries and max_bytes bytes of bodies; answers, for each, 'kept',
-- 'over_rows' or 'over_bytes'. The backlog's row is locked first: keeps on every replica, and
-- reviews, take turns on it, and it is read after the last one committed, so the bounds hold exactly.
DROP FUNCTION collection_quarantine_keep(jsonb, bigint);
CREATE FUNCTION collection_quarantine_keep(deliveries jsonb, max_unreviewed bigint, max_bytes bigint) RETURNS text[]
  LANGUAGE plpgsql
  AS $$
DECLARE
  rows_left bigint;
  bytes_left bigint;
  size bigint;
  outcomes text[] := '{}';
  kept bigint[] := '{}';
BEGIN
  SELECT max_unreviewed - unreviewed, max_bytes - unreviewed_bytes INTO rows_left, bytes_left FROM collection_quarantine_backlog FOR UPDATE;
  FOR position IN 1 .. jsonb_array_length(deliveries) LOOP
    size := (deliveries -> (position - 1) ->> 9)::bigint;
    IF rows_left <= 0 THEN
      outcomes := outcomes || 'over_rows'::text;
    ELSIF size > bytes_left THEN
      outcomes := outcomes || 'over_bytes'::text;
    ELSE
      rows_left := rows_left - 1;
      bytes_left := bytes_left - size;
      outcomes := outcomes || 'kept'::text;
      kept := kept || position::bigint;
    END IF;
  END LOOP;
  INSERT INTO collection_quarantine (kind, reason, detail, response_code, received_at, session_id, settlement_id, account_number, raw_body)
    SELECT d ->> 0, d ->> 1, d ->> 2, d ->> 3, d ->> 4, d ->> 5, d ->> 6, d ->> 7, decode(d ->> 8, 'base64')
    FROM jsonb_array_elements(deliveries) WITH ORDINALITY AS u(d, position)
    WHERE position = ANY(kept)
    ORDER BY position;
  RETURN outcomes;
END
$$;
