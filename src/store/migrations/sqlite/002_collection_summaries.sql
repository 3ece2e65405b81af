-- collectionSummary and time ranges. SQLite has no decimal type and its integer SUM fails past
-- 2^63, so each amount is also kept as kobo (two decimals) split into two integers below 10^9,
-- hi * 10^9 + lo: summed in SQL they stay exact, never a float, and cannot overflow before some
-- 9 billion rows (a sum of values under 10^9 each). An amount finer than kobo, or of 10^16 naira
-- or more, gets no kobo columns and marks its row amounts_beyond_kobo = 1: the store adds those
-- few exactly from their text (BigInt), through an index of them alone. event_ms is the
-- notification's time (transactionTime, else receivedAt) in epoch milliseconds, for ranges.
--
-- The webhook's insert fills these columns (src/store/sqlite-summary.ts encodes the same way);
-- the UPDATE below fills them for rows stored before, from the same text, in SQL: substr and CAST
-- on digit strings, exact. The TEXT columns stay the record; nothing is lost.
ALTER TABLE collection_notifications ADD COLUMN event_ms INTEGER;
ALTER TABLE collection_notifications ADD COLUMN transaction_amount_kobo_hi INTEGER;
ALTER TABLE collection_notifications ADD COLUMN transaction_amount_kobo_lo INTEGER;
ALTER TABLE collection_notifications ADD COLUMN settled_amount_kobo_hi INTEGER;
ALTER TABLE collection_notifications ADD COLUMN settled_amount_kobo_lo INTEGER;
ALTER TABLE collection_notifications ADD COLUMN fee_amount_kobo_hi INTEGER;
ALTER TABLE collection_notifications ADD COLUMN fee_amount_kobo_lo INTEGER;
ALTER TABLE collection_notifications ADD COLUMN vat_amount_kobo_hi INTEGER;
ALTER TABLE collection_notifications ADD COLUMN vat_amount_kobo_lo INTEGER;
ALTER TABLE collection_notifications ADD COLUMN amounts_beyond_kobo INTEGER;

UPDATE collection_notifications AS n SET
  event_ms = unixepoch(coalesce(n.transaction_time, n.received_at)) * 1000
    + CAST(substr(strftime('%f', coalesce(n.transaction_time, n.received_at)), 4, 3) AS INTEGER),
  transaction_amount_kobo_hi = CAST(substr(k.t, 1, length(k.t) - 9) AS INTEGER),
  transaction_amount_kobo_lo = CAST(substr(k.t, -9) AS INTEGER),
  settled_amount_kobo_hi = CAST(substr(k.s, 1, length(k.s) - 9) AS INTEGER),
  settled_amount_kobo_lo = CAST(substr(k.s, -9) AS INTEGER),
  fee_amount_kobo_hi = CAST(substr(k.f, 1, length(k.f) - 9) AS INTEGER),
  fee_amount_kobo_lo = CAST(substr(k.f, -9) AS INTEGER),
  vat_amount_kobo_hi = CAST(substr(k.v, 1, length(k.v) - 9) AS INTEGER),
  vat_amount_kobo_lo = CAST(substr(k.v, -9) AS INTEGER),
  amounts_beyond_kobo = CASE
    WHEN k.t IS NULL OR (n.settled_amount IS NOT NULL AND k.s IS NULL)
      OR (n.fee_amount IS NOT NULL AND k.f IS NULL) OR (n.vat_amount IS NOT NULL AND k.v IS NULL) THEN 1
  END
FROM (
  -- Each amount's kobo as a digit string, or NULL when it is absent or does not fit.
  SELECT seq,
    CASE
        WHEN instr(transaction_amount, '.') = 0 THEN CASE WHEN length(transaction_amount) <= 16 THEN transaction_amount || '00' END
        WHEN instr(transaction_amount, '.') <= 17 AND rtrim(substr(transaction_amount, instr(transaction_amount, '.') + 3), '0') = ''
          THEN substr(transaction_amount, 1, instr(transaction_amount, '.') - 1) || substr(substr(transaction_amount, instr(transaction_amount, '.') + 1) || '00', 1, 2)
      END AS t,
    CASE
        WHEN instr(settled_amount, '.') = 0 THEN CASE WHEN length(settled_amount) <= 16 THEN settled_amount || '00' END
        WHEN instr(settled_amount, '.') <= 17 AND rtrim(substr(settled_amount, instr(settled_amount, '.') + 3), '0') = ''
          THEN substr(settled_amount, 1, instr(settled_amount, '.') - 1) || substr(substr(settled_amount, instr(settled_amount, '.') + 1) || '00', 1, 2)
      END AS s,
    CASE
        WHEN instr(fee_amount, '.') = 0 THEN CASE WHEN length(fee_amount) <= 16 THEN fee_amount || '00' END
        WHEN instr(fee_amount, '.') <= 17 AND rtrim(substr(fee_amount, instr(fee_amount, '.') + 3), '0') = ''
          THEN substr(fee_amount, 1, instr(fee_amount, '.') - 1) || substr(substr(fee_amount, instr(fee_amount, '.') + 1) || '00', 1, 2)
      END AS f,
    CASE
        WHEN instr(vat_amount, '.') = 0 THEN CASE WHEN length(vat_amount) <= 16 THEN vat_amount || '00' END
        WHEN instr(vat_amount, '.') <= 17 AND rtrim(substr(vat_amount, instr(vat_amount, '.') + 3), '0') = ''
          THEN substr(vat_amount, 1, instr(vat_amount, '.') - 1) || substr(substr(vat_amount, instr(vat_amount, '.') + 1) || '00', 1, 2)
      END AS v
  FROM collection_notifications
) AS k
WHERE k.seq = n.seq;

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
