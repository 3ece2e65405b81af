-- What the bank said of each notification, read from the indexes that summaries and pages read:
-- collectionSummary never counts what the bank refuted (MISMATCHED, NOT_AT_BANK) and may count
-- CONFIRMED alone, and collectionNotifications lists by confirmation status.
--
-- The two time indexes are rebuilt with confirmation_status last: every account's summary still
-- reads only its index, and a page of a range picks its seqs from the range's index alone, status
-- included. One account's summary reads its rows from the table, as before.
--
-- A page by status outside a range reads the log of each status asked for, newest first, from
-- its own index alone (event_ms covered, for a page since `from`): a rare status (MISMATCHED,
-- NOT_AT_BANK, UNCHECKED rows of long ago) is found without reading past every other notification.
--
-- A change of status now rewrites the entries of every index that holds it, the price of reading
-- it from them. The migration holds the file's write lock while it builds; readers go on from what
-- was committed before it (docs/operations.md, "Start-up").
DROP INDEX collection_notifications_account_time;
CREATE INDEX collection_notifications_account_time ON collection_notifications (account_number, event_ms, confirmation_status);
DROP INDEX collection_notifications_time;
CREATE INDEX collection_notifications_time ON collection_notifications (
  event_ms,
  transaction_amount_kobo_hi, transaction_amount_kobo_lo, settled_amount_kobo_hi, settled_amount_kobo_lo,
  fee_amount_kobo_hi, fee_amount_kobo_lo, vat_amount_kobo_hi, vat_amount_kobo_lo,
  confirmation_status
);
CREATE INDEX collection_notifications_status_seq ON collection_notifications (confirmation_status, seq, event_ms);
CREATE INDEX collection_notifications_account_status_seq ON collection_notifications (account_number, confirmation_status, seq, event_ms);
-- What the bank refuted, counted beside every summary's days: rare, so these stay small, and a
-- row enters them only when the bank's answer refutes it. The status is in them too, so the
-- count reads no row.
CREATE INDEX collection_notifications_refuted_time ON collection_notifications (event_ms, confirmation_status)
  WHERE confirmation_status IN ('MISMATCHED', 'NOT_AT_BANK');
CREATE INDEX collection_notifications_account_refuted_time ON collection_notifications (account_number, event_ms, confirmation_status)
  WHERE confirmation_status IN ('MISMATCHED', 'NOT_AT_BANK');
