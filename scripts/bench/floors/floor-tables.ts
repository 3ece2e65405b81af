// The floors' tables and inserts: written by the receivers (floors/receiver.ts, floors/pg-receiver.ts)
// and by the insert-cost mode (insert-cost.ts), so both measure the same row.

/** SQLite: the row the bare receiver stores, one prepared insert per delivery inside a batch's transaction. */
export const SQLITE_FLOOR = {
  table: 'CREATE TABLE notifications (position INTEGER PRIMARY KEY, settlement_id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, body TEXT NOT NULL)',
  insert: 'INSERT INTO notifications (settlement_id, session_id, body) VALUES (?, ?, ?) ON CONFLICT (settlement_id) DO NOTHING',
};

/** PostgreSQL: the same row, a whole batch in one statement ($1-$3: the settlementIds, sessionIds and bodies). */
export const POSTGRES_FLOOR = {
  table: `CREATE TABLE notifications (
  position BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  settlement_id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, body TEXT NOT NULL)`,
  insert: `INSERT INTO notifications (settlement_id, session_id, body)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
  ON CONFLICT (settlement_id) DO NOTHING RETURNING settlement_id`,
};
