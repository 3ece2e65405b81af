-- Log positions without the insert lock. Inserts no longer serialise on a lock, so seq no longer
-- follows commit order across replicas; each row now records the transaction that wrote it, and the
-- log is read in (txid, seq) order, only below the oldest transaction still running (see
-- src/store/postgres.ts for why that misses nothing and repeats nothing).
--
-- Rows already stored were written under the lock, one transaction at a time, so their seq order is
-- their commit order: txid 0 keeps them in that order, before every row written from now on (real
-- transaction ids start at 3). Adding a column with a constant default rewrites no row.
ALTER TABLE collection_notifications ADD COLUMN txid xid8 NOT NULL DEFAULT '0';

-- From now on each row gets its writer's id, whoever inserts it (a replica of an earlier release
-- still running during an upgrade too). Evaluating it assigns the transaction an id, so the store
-- takes care that a row already stored never reaches this default (see its insert).
ALTER TABLE collection_notifications ALTER COLUMN txid SET DEFAULT pg_current_xact_id();

-- The log read by every replica's follower: (txid, seq) > $1 AND txid < xmin ORDER BY txid, seq.
CREATE INDEX collection_notifications_log ON collection_notifications (txid, seq);

-- Per-account replays and pages in the same order; it replaces the (account_number, seq) index.
CREATE INDEX collection_notifications_account_log ON collection_notifications (account_number, txid, seq);
DROP INDEX collection_notifications_account_seq;
