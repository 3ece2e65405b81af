// Floor for the webhook on SQLite: the least a durable receiver must do. node:http + node:sqlite (WAL,
// synchronous=FULL): checks Client-Id and X-Auth-Signature, parses the JSON, inserts under a unique
// settlement_id (ON CONFLICT DO NOTHING), and answers in the bank's shape only after the commit that
// holds the delivery. Deliveries that arrive together share one commit: they are queued and the
// queue is written in one transaction per event-loop turn (group commit, batch per tick). With
// FLOOR_ROW=ours it stores our row instead of its own three columns (floors/our-row.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SQLITE_FLOOR } from './floor-tables.ts';
import { sqliteOurRow, STORES_OUR_ROW } from './our-row.ts';
import { reply, serveWebhookFloor, type Code, type Delivery } from './webhook-floor.ts';

const dir = mkdtempSync(join(process.env.BENCH_DIR || tmpdir(), 'bench-receiver-'));
const { db, insert } = STORES_OUR_ROW ? await sqliteOurRow(join(dir, 'receiver.db')) : floorRow();

/** The receiver's own row: settlement_id, session_id and the body. */
function floorRow() {
  const database = new DatabaseSync(join(dir, 'receiver.db'));
  database.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
  database.exec(SQLITE_FLOOR.table);
  const statement = database.prepare(SQLITE_FLOOR.insert);
  return { db: database, insert: (item: Delivery) => statement.run(item.settlementId, item.sessionId, item.body) };
}

/** Writes every queued delivery in one transaction; a duplicate (stored or in the batch) changes nothing: 01. */
function commit(batch: Delivery[]): void {
  let codes: Code[];
  try {
    db.exec('BEGIN');
    codes = batch.map((item) => (insert(item).changes === 1 ? '00' : '01'));
    db.exec('COMMIT');
  } catch {
    if (db.isTransaction) db.exec('ROLLBACK');
    codes = batch.map(() => '03');
  }
  batch.forEach((item, i) => reply(item.response, item.sessionId, codes[i]!));
}

await serveWebhookFloor({
  commit,
  async close() {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  },
});
