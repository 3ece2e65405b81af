-- What the bank said of each notification, read from the indexes that summaries and pages read:
-- collectionSummary never counts what the bank refuted (MISMATCHED, NOT_AT_BANK) and may count
-- CONFIRMED alone, and collectionNotifications lists by confirmation status.
--
-- The two time indexes are rebuilt with confirmation_status among their covered columns, so a
-- summary (what it counts and what it leaves out as refuted, from one scan), and the positions of a
-- page of a range, still read only the index (an index-only scan).
-- A notification's status changes once or twice (PENDING, then the bank's answer), and such an
-- update already writes a new entry in every index (the pending index's condition reads the
-- status), so covering the status costs an update nothing more there.
--
-- A page by status outside a range reads the log of each status asked for, newest first, from
-- its own index alone (event_time covered, for a page since `from`): a rare status (MISMATCHED,
-- NOT_AT_BANK, UNCHECKED rows of long ago) is found without reading past every other notification.
-- These two take an entry per insert and per change of status.
--
-- CREATE INDEX holds the table's writes while it builds (CONCURRENTLY cannot run in a migration's
-- transaction): deliveries wait meanwhile, or are answered 03 and sent again by the bank
-- (docs/operations.md, "Start-up"). The new time indexes are built beside the old ones, which are
-- dropped last: dropping an index holds reads too, until the migration commits.
CREATE INDEX collection_notifications_account_time_006 ON collection_notifications (account_number, event_time)
  INCLUDE (txid, seq, transaction_amount_numeric, settled_amount_numeric, fee_amount_numeric, vat_amount_numeric, confirmation_status);
CREATE INDEX collection_notifications_time_006 ON collection_notifications (event_time)
  INCLUDE (txid, seq, transaction_amount_numeric, settled_amount_numeric, fee_amount_numeric, vat_amount_numeric, confirmation_status);
CREATE INDEX collection_notifications_status_log ON collection_notifications (confirmation_status, txid, seq) INCLUDE (event_time);
CREATE INDEX collection_notifications_account_status_log ON collection_notifications (account_number, confirmation_status, txid, seq)
  INCLUDE (event_time);
DROP INDEX collection_notifications_account_time;
DROP INDEX collection_notifications_time;
ALTER INDEX collection_notifications_account_time_006 RENAME TO collection_notifications_account_time;
ALTER INDEX collection_notifications_time_006 RENAME TO collection_notifications_time;
