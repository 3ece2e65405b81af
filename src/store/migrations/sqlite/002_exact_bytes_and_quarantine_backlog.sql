-- Bytes kept exactly, and the quarantine bounded by bytes as well as rows.
--
-- raw_body_bytes: the request's bytes where raw_body's text cannot give them back, i.e. where the
-- body is not well-formed UTF-8 (a Latin-1 é became U+FFFD in the text). Null otherwise, and for
-- every row stored before this migration: their bytes are their text's UTF-8. Null for nearly every
-- delivery, so the 00 path writes nothing more than before.
ALTER TABLE collection_notifications ADD COLUMN raw_body_bytes BLOB;

-- What awaits review in the quarantine, kept by the database itself (the triggers below follow every
-- insert, review and delete, by the store or by hand), so the bounds QUARANTINE_MAX_ROWS and
-- QUARANTINE_MAX_BYTES are read in one row rather than counted. One row, always.
CREATE TABLE collection_quarantine_backlog (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  unreviewed INTEGER NOT NULL,
  unreviewed_bytes INTEGER NOT NULL
) STRICT;
INSERT INTO collection_quarantine_backlog (only_row, unreviewed, unreviewed_bytes)
  SELECT 1, count(*), coalesce(sum(length(raw_body)), 0) FROM collection_quarantine WHERE reviewed_at IS NULL;

CREATE TRIGGER collection_quarantine_backlog_insert AFTER INSERT ON collection_quarantine WHEN NEW.reviewed_at IS NULL
BEGIN
  UPDATE collection_quarantine_backlog SET unreviewed = unreviewed + 1, unreviewed_bytes = unreviewed_bytes + length(NEW.raw_body);
END;
CREATE TRIGGER collection_quarantine_backlog_update AFTER UPDATE ON collection_quarantine
  WHEN OLD.reviewed_at IS NULL OR NEW.reviewed_at IS NULL
BEGIN
  UPDATE collection_quarantine_backlog SET
    unreviewed = unreviewed + (NEW.reviewed_at IS NULL) - (OLD.reviewed_at IS NULL),
    unreviewed_bytes = unreviewed_bytes + iif(NEW.reviewed_at IS NULL, length(NEW.raw_body), 0) - iif(OLD.reviewed_at IS NULL, length(OLD.raw_body), 0);
END;
CREATE TRIGGER collection_quarantine_backlog_delete AFTER DELETE ON collection_quarantine WHEN OLD.reviewed_at IS NULL
BEGIN
  UPDATE collection_quarantine_backlog SET unreviewed = unreviewed - 1, unreviewed_bytes = unreviewed_bytes - length(OLD.raw_body);
END;
