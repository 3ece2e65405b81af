-- settlementId and accountNumber are identifiers: compared for equality, never sorted for people.
-- In the database's collation (often en_US.UTF-8, and even C.UTF-8) every comparison their four
-- indexes make on each insert goes through the locale; in "C" it compares bytes, a measurable part
-- of the database's CPU per stored notification (docs/benchmarks.md). Equality is
-- unchanged, since a deterministic collation finds equal only identical text, so no query changes
-- and each still uses its index. The indexes on the two columns (the unique settlement_id, and the
-- three led by account_number) are rebuilt in byte order, holding the table's lock while they are;
-- the table itself is not rewritten.
ALTER TABLE collection_notifications
  ALTER COLUMN settlement_id TYPE text COLLATE "C",
  ALTER COLUMN account_number TYPE text COLLATE "C";
