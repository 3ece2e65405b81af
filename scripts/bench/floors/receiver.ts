// Floor for the webhook on SQLite: the least a durable receiver must do to store the row ours stores.
// node:http + node:sqlite in WAL with synchronous=FULL, as ours; the table made by our migrations;
// each turn's deliveries written by ONE statement (INSERT … VALUES (…), (…) ON CONFLICT DO NOTHING
// RETURNING), its own commit, before any of them is answered. Beside the notification's columns it
// computes what summaries read, as migration files describe them: the time in epoch ms and each
// amount in kobo as two integer limbs (hi × 10^9 + lo), or a flag where an amount is finer than kobo.
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { answer, answerRefused, serveWebhookFloor, type Delivery, type Refused } from './webhook-floor.ts';
import { COLUMNS, migrationsOf, QUARANTINE_COLUMNS, refusalValues, values } from './row.ts';

const AMOUNTS = ['transaction_amount', 'settled_amount', 'fee_amount', 'vat_amount'];
const ALL_COLUMNS = [...COLUMNS, 'event_ms', ...AMOUNTS.flatMap((a) => [`${a}_kobo_hi`, `${a}_kobo_lo`]), 'amounts_beyond_kobo'];
/** Rows per statement: SQLite takes at most 32,766 values in one. */
const MOST_ROWS = 1_000;
const KOBO = /^(\d{1,16})(?:\.(\d{1,2})0*)?$/;

const path = process.env.FLOOR_SQLITE_FILE;
if (!path) throw new Error('floors/receiver.ts needs FLOOR_SQLITE_FILE (the bench sets it)');
const db = new DatabaseSync(path);
db.exec('PRAGMA busy_timeout = 5000');
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = FULL');
for (const sql of await migrationsOf('sqlite')) {
  db.exec('BEGIN');
  db.exec(sql);
  db.exec('COMMIT');
}

/** One prepared statement per batch size. */
const statements = new Map<number, StatementSync>();
function insertOf(rows: number): StatementSync {
  let statement = statements.get(rows);
  if (!statement) {
    const row = `(${ALL_COLUMNS.map(() => '?').join(', ')})`;
    statement = db.prepare(`INSERT INTO collection_notifications (${ALL_COLUMNS.join(', ')}) VALUES ${Array(rows).fill(row).join(', ')}
      ON CONFLICT (settlement_id) DO NOTHING RETURNING settlement_id`);
    statements.set(rows, statement);
  }
  return statement;
}

/** Appends the row's columns and its summary columns to `out`. */
function push(out: SQLInputValue[], delivery: Delivery, receivedAt: string): void {
  const row = values(delivery.row, receivedAt);
  out.push(...row, Date.parse(delivery.row.transactionTime ?? receivedAt));
  let beyond = false;
  for (const amount of [delivery.row.transactionAmount, ...delivery.row.amounts]) {
    const match = amount === null ? null : KOBO.exec(amount);
    if (!match) {
      beyond ||= amount !== null;
      out.push(null, null);
      continue;
    }
    const digits = match[1]! + (match[2] ?? '').padEnd(2, '0');
    out.push(digits.length > 9 ? Number(digits.slice(0, -9)) : 0, Number(digits.slice(-9)));
  }
  out.push(beyond ? 1 : null);
}

function commit(batch: Delivery[]): void {
  const receivedAt = new Date().toISOString();
  const stored: string[] = [];
  try {
    if (batch.length > MOST_ROWS) db.exec('BEGIN IMMEDIATE');
    for (let start = 0; start < batch.length; start += MOST_ROWS) {
      const chunk = batch.slice(start, start + MOST_ROWS);
      const params: SQLInputValue[] = [];
      for (const delivery of chunk) push(params, delivery, receivedAt);
      for (const row of insertOf(chunk.length).all(...params)) stored.push(row.settlement_id as string);
    }
    if (db.isTransaction) db.exec('COMMIT');
  } catch {
    if (db.isTransaction) db.exec('ROLLBACK');
    return answer(batch, undefined);
  }
  answer(batch, stored);
}

/** One statement per refusals' batch size. */
const keeps = new Map<number, StatementSync>();
function keepOf(rows: number): StatementSync {
  let statement = keeps.get(rows);
  if (!statement) {
    const row = `(${QUARANTINE_COLUMNS.map(() => '?').join(', ')})`;
    statement = db.prepare(
      `INSERT INTO collection_quarantine (${QUARANTINE_COLUMNS.join(', ')}) VALUES ${Array(rows).fill(row).join(', ')}`,
    );
    keeps.set(rows, statement);
  }
  return statement;
}

/** Keeps a turn's refusals in the quarantine: one statement, its own commit (a few thousand rows at most per statement). */
function keep(batch: Refused[]): void {
  const receivedAt = new Date().toISOString();
  try {
    if (batch.length > MOST_ROWS) db.exec('BEGIN IMMEDIATE');
    for (let start = 0; start < batch.length; start += MOST_ROWS) {
      const chunk = batch.slice(start, start + MOST_ROWS);
      keepOf(chunk.length).run(...chunk.flatMap(({ refusal, body }) => refusalValues(refusal, receivedAt, body)));
    }
    if (db.isTransaction) db.exec('COMMIT');
  } catch {
    if (db.isTransaction) db.exec('ROLLBACK');
    return answerRefused(batch, false);
  }
  answerRefused(batch, true);
}

await serveWebhookFloor({ commit, keep, close: async () => db.close() });
