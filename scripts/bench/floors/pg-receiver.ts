// Floor for the webhook on PostgreSQL: the least a durable receiver must do there, with the same rules
// and reply as the SQLite one (floors/webhook-floor.ts). Every delivery of one event-loop turn goes to
// the database as ONE statement, `INSERT … SELECT FROM unnest(…) ON CONFLICT (settlement_id) DO NOTHING
// RETURNING settlement_id`, in an implicit transaction with synchronous_commit on: one round trip per
// batch, and nothing is answered before its commit. Up to IN_FLIGHT batches run at once on their own
// connections, so a turn's batch does not wait for the previous one's WAL flush; while all are busy,
// deliveries gather into the next. The table, in a schema the orchestrator made for it
// (FLOOR_DATABASE_URL selects it), holds what the SQLite floor holds: settlement_id, session_id, body.
// With FLOOR_ROW=ours it stores our row instead (floors/our-row.ts).
import pg from 'pg';
import { POSTGRES_FLOOR } from './floor-tables.ts';
import { postgresOurRow, STORES_OUR_ROW } from './our-row.ts';
import { codesFor, reply, serveWebhookFloor, type Code, type Delivery } from './webhook-floor.ts';

/** Batches written at once; measured against 1 (docs/benchmarks.md), the floor's best. */
const IN_FLIGHT = 4;

if (!process.env.FLOOR_DATABASE_URL) throw new Error('floors/pg-receiver.ts needs FLOOR_DATABASE_URL (the bench sets it)');
const url = new URL(process.env.FLOOR_DATABASE_URL);
// synchronous_commit on whatever the server's default: a 00 must survive a crash.
url.searchParams.set('options', `${url.searchParams.get('options') ?? ''} -c synchronous_commit=on`.trim());
const pool = new pg.Pool({ connectionString: url.toString(), max: IN_FLIGHT });
const statement = STORES_OUR_ROW ? await postgresOurRow(url.toString()) : await floorRow();

/** The receiver's own row: settlement_id, session_id and the body, as three arrays. */
async function floorRow() {
  await pool.query(POSTGRES_FLOOR.table);
  return {
    text: POSTGRES_FLOOR.insert,
    values: (batch: readonly Delivery[]) => [batch.map((d) => d.settlementId), batch.map((d) => d.sessionId), batch.map((d) => d.body)],
  };
}

let inFlight = 0;
let waiting: Delivery[] = [];

async function write(batch: Delivery[]): Promise<void> {
  inFlight += 1;
  let codes: Code[];
  try {
    const values = statement.values(batch);
    const { rows } = await pool.query<{ settlement_id: string }>({ name: 'insert', text: statement.text, values });
    codes = codesFor(batch, rows.map((row) => row.settlement_id));
  } catch {
    codes = batch.map(() => '03');
  }
  inFlight -= 1;
  batch.forEach((item, i) => reply(item.response, item.sessionId, codes[i]!));
  if (waiting.length > 0) {
    const next = waiting;
    waiting = [];
    void write(next);
  }
}

await serveWebhookFloor({
  commit(batch) {
    if (inFlight < IN_FLIGHT) void write(batch);
    else waiting.push(...batch);
  },
  close: () => pool.end(),
});
