// Floor for the webhook on SQLite: the least a durable receiver must do. node:http + node:sqlite (WAL,
// synchronous=FULL): checks Client-Id and X-Auth-Signature, parses the JSON, inserts under a unique
// settlement_id (ON CONFLICT DO NOTHING), and answers in the bank's shape only after the commit that
// holds the delivery. Deliveries that arrive together share one commit: they are queued and the
// queue is written in one transaction per event-loop turn (group commit, batch per tick).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SQLITE_FLOOR } from './floor-tables.ts';
import { reply, serveWebhookFloor, type Code, type Delivery } from './webhook-floor.ts';

const dir = mkdtempSync(join(process.env.BENCH_DIR || tmpdir(), 'bench-receiver-'));
const db = new DatabaseSync(join(dir, 'receiver.db'));
db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
db.exec(SQLITE_FLOOR.table);
const insert = db.prepare(SQLITE_FLOOR.insert);

/** Writes every queued delivery in one transaction; a duplicate (stored or in the batch) changes nothing: 01. */
function commit(batch: Delivery[]): void {
  let codes: Code[];
  try {
    db.exec('BEGIN');
    codes = batch.map((item) => (insert.run(item.settlementId, item.sessionId, item.body).changes === 1 ? '00' : '01'));
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
