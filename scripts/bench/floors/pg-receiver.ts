// Floor for the webhook on PostgreSQL: the least a durable receiver must do to store the row ours
// stores there, with the bank's rules and reply of floors/webhook-floor.ts. The table made by our
// migrations; each turn's deliveries in ONE statement, its own transaction with synchronous_commit
// on, answered only after it: `INSERT … SELECT … FROM jsonb_array_elements($1) ON CONFLICT DO NOTHING
// RETURNING settlement_id`, the rows as one JSON parameter (the cheapest shape measured, see
// docs/benchmarks.md, "What shapes the code") in settlementId order, so concurrent batches lock
// alike. Beside the notification's columns it writes what summaries read: the time as timestamptz
// and each amount as numeric. A few batches are in flight at once on connections of their own, so
// one batch does not wait for the last one's WAL flush; while all are busy, deliveries gather.
import pg from 'pg';
import { answer, answerRefused, serveWebhookFloor, type Delivery, type Refused } from './webhook-floor.ts';
import { COLUMNS, migrationsOf, QUARANTINE_COLUMNS, refusalValues, values } from './row.ts';

const IN_FLIGHT = 4;
const SUMS = {
  event_time: `(r ->> ${COLUMNS.length})::timestamptz`,
  transaction_amount_numeric: `(r ->> ${COLUMNS.indexOf('transaction_amount')})::numeric`,
  settled_amount_numeric: `(r ->> ${COLUMNS.indexOf('settled_amount')})::numeric`,
  fee_amount_numeric: `(r ->> ${COLUMNS.indexOf('fee_amount')})::numeric`,
  vat_amount_numeric: `(r ->> ${COLUMNS.indexOf('vat_amount')})::numeric`,
};
const INSERT = `INSERT INTO collection_notifications (${[...COLUMNS, ...Object.keys(SUMS)].join(', ')})
  SELECT ${[...COLUMNS.map((_, i) => `r ->> ${i}`), ...Object.values(SUMS)].join(', ')} FROM jsonb_array_elements($1::jsonb) AS u(r)
  ON CONFLICT (settlement_id) DO NOTHING RETURNING settlement_id`;

// A turn's refusals, kept in the quarantine the same way: one statement, the bodies in base64.
const KEEP = `INSERT INTO collection_quarantine (${QUARANTINE_COLUMNS.join(', ')})
  SELECT ${QUARANTINE_COLUMNS.map((column, i) => (column === 'raw_body' ? `decode(r ->> ${i}, 'base64')` : `r ->> ${i}`)).join(', ')} FROM jsonb_array_elements($1::jsonb) AS u(r)`;

if (!process.env.FLOOR_DATABASE_URL) throw new Error('floors/pg-receiver.ts needs FLOOR_DATABASE_URL (the bench sets it)');
const url = new URL(process.env.FLOOR_DATABASE_URL);
// On whatever the server's default: a 00 must survive a crash.
url.searchParams.set('options', `${url.searchParams.get('options') ?? ''} -c synchronous_commit=on`.trim());
const pool = new pg.Pool({ connectionString: url.toString(), max: IN_FLIGHT });
// A connection that fails between statements is replaced; its batch has already answered 03.
pool.on('error', () => undefined);
for (const sql of await migrationsOf('postgres')) await pool.query(sql);

let inFlight = 0;
let waiting: Delivery[] = [];

async function write(batch: Delivery[]): Promise<void> {
  inFlight += 1;
  const receivedAt = new Date().toISOString();
  const rows = batch
    .map((delivery) => [...values(delivery.row, receivedAt), delivery.row.transactionTime ?? receivedAt])
    .sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0));
  let stored: string[] | undefined;
  try {
    const result = await pool.query<{ settlement_id: string }>({ name: 'insert', text: INSERT, values: [JSON.stringify(rows)] });
    stored = result.rows.map((row) => row.settlement_id);
  } catch {
    stored = undefined;
  }
  inFlight -= 1;
  answer(batch, stored);
  if (waiting.length > 0) {
    const next = waiting;
    waiting = [];
    void write(next);
  }
}

async function keep(batch: Refused[]): Promise<void> {
  const receivedAt = new Date().toISOString();
  const rows = batch.map(({ refusal, body }) =>
    refusalValues(refusal, receivedAt, body).map((value) => (value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value)),
  );
  const kept = await pool.query({ name: 'keep', text: KEEP, values: [JSON.stringify(rows)] }).then(
    () => true,
    () => false,
  );
  answerRefused(batch, kept);
}

await serveWebhookFloor({
  keep: (batch) => void keep(batch),
  commit(batch) {
    if (inFlight < IN_FLIGHT) void write(batch);
    else waiting.push(...batch);
  },
  close: () => pool.end(),
});
