// `node scripts/bench/fill-store.ts --store <STORE_URL> --rows 1000000 [--from <index>] [--up-to]`
// Fills a store with realistic notifications, fast, for measuring how the subgraph behaves as its log
// grows (`npm run bench -- --rows N`). The schema comes from the store's own migrations (the store is
// opened once, then closed); the rows go in with SQL, generated inside the database: PostgreSQL
// `INSERT … SELECT … FROM generate_series`, SQLite a recursive CTE, in chunks of one statement and
// one commit each. A progress line (rows/s) goes to stderr.
//
// Rows look like the webhook's: the bank's body verbatim (the same fields and shapes as the sandbox
// sends), amounts as exact decimal text, bank times with their offset, spread over the past year in
// position order; 1,000 accounts, of which the sandbox's five are busy (8 % of the rows each).
// Only the columns of the first migration are filled: columns added later must have a default, and a
// NOT NULL one without a default stops the fill, naming it, rather than letting it guess. The summary
// columns are the exception: on PostgreSQL the trigger of migration 004 fills them for any insert that
// leaves them out; on SQLite the webhook's insert computes them in JS, so each chunk runs migration
// 002's own backfill over its rows, in the same transaction: the encoding has one source, and filled
// rows summarise as delivered ones do.
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { createNotificationStore } from '../../src/store/index.ts';
import { loadMigrations } from '../../src/store/migrations.ts';

/** The sandbox's accounts: the busy ones, each holding 8 % of the filled rows. */
export const BUSY_ACCOUNTS = ['0123456789', '1234567890', '0011223344', '2233445566', '9876543210'] as const;
const OTHER_ACCOUNTS = 995;
const CHUNK_ROWS = 50_000;
const PROGRESS_EVERY_MS = 1_000;
/** The least amount: above the largest fee with its VAT (₦10.75), so every settled amount is positive. */
const MIN_KOBO = 1_100;
/** One notification every ~31.5 s: a million of them span a year. */
const SECONDS_APART = 31;

/** The columns every version of the schema has (migration 001), in the order the SELECT gives them. */
const FILL_COLUMNS = [
  'settlement_id', 'session_id', 'account_number', 'transaction_amount', 'settled_amount', 'fee_amount', 'vat_amount',
  'currency', 'narration', 'initiation_tran_ref', 'source_account_number', 'source_account_name', 'source_bank_name',
  'channel_id', 'transaction_time', 'received_at', 'raw_body',
] as const;

const NAMES = ['CHUKWUEMEKA OBI', 'ADAEZE OKONKWO', 'BABATUNDE BELLO', 'FATIMA YUSUF', 'NGOZI EZE', 'IBRAHIM SANI', 'FOLAKE ADEYEMI', 'EMEKA NWOSU'];
const BANKS = ['GTBank', 'Access Bank', 'Zenith Bank', 'First Bank of Nigeria', 'UBA', 'Kuda', 'OPay', 'Moniepoint'];

/** The settlementId of the `index`th filled notification: 15 digits starting with 9, apart from the bench's own. */
export function fillSettlementId(index: number): string {
  return `9${String(index).padStart(14, '0')}`;
}

/** The account of the `index`th filled notification (the same rule as the SQL below). */
export function fillAccount(index: number): string {
  return index % 10 < 4 ? BUSY_ACCOUNTS[Math.floor(index / 10) % 5]! : `20${String((index * 7919) % OTHER_ACCOUNTS).padStart(8, '0')}`;
}

interface Dialect {
  pad(expression: string, width: number): string;
  /** Epoch seconds → `YYYY-MM-DDTHH:MM:SS` in UTC. */
  isoSeconds(epochSeconds: string): string;
  /** The INSERT of rows from..to, its two parameters. */
  insert(select: string): string;
}

const POSTGRES: Dialect = {
  pad: (e, w) => `lpad((${e})::text, ${w}, '0')`,
  isoSeconds: (e) => `to_char(to_timestamp(${e}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')`,
  insert: (select) =>
    `INSERT INTO collection_notifications (${FILL_COLUMNS.join(', ')}) ${select.replace('$SERIES', 'generate_series($1::bigint, $2::bigint) AS s(i)')}`,
};

const SQLITE: Dialect = {
  pad: (e, w) => `printf('%0${w}d', ${e})`,
  isoSeconds: (e) => `strftime('%Y-%m-%dT%H:%M:%S', ${e}, 'unixepoch')`,
  insert: (select) =>
    `WITH RECURSIVE s(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM s WHERE i < ?)
     INSERT INTO collection_notifications (${FILL_COLUMNS.join(', ')}) ${select.replace('$SERIES', 's')}`,
};

const pick = (list: readonly string[], index: string) => `CASE ${index} ${list.map((v, i) => `WHEN ${i} THEN '${v}'`).join(' ')} END`;

/** The SELECT of the filled rows; `epoch` is the first row's time (seconds), inlined as a number. */
function rowsSelect(d: Dialect, epoch: number): string {
  const base = `SELECT i,
      CASE WHEN i % 10 < 4 THEN ${pick(BUSY_ACCOUNTS, '(i / 10) % 5')} ELSE ('20' || ${d.pad(`(i * 7919) % ${OTHER_ACCOUNTS}`, 8)}) END AS account,
      (i * 7907) % 20000000 + ${MIN_KOBO} AS cents,
      ${epoch} + i * ${SECONDS_APART} AS at
    FROM $SERIES`;
  // Parenthesised throughout: SQLite's || binds tighter than / and %, PostgreSQL's looser.
  const money = (cents: string) => `(((${cents}) / 100) || '.' || ${d.pad(`(${cents}) % 100`, 2)})`;
  const fee = `CASE WHEN cents < 500000 THEN 1000 WHEN cents < 5000000 THEN 2500 ELSE 5000 END`;
  const v = {
    settlement: `('9' || ${d.pad('i', 14)})`,
    session: `('100004' || ${d.pad('i', 24)})`,
    amount: money('cents'),
    settled: money(`cents - (${fee}) - (${fee}) * 75 / 1000`),
    fee: money(fee),
    vat: money(`(${fee}) * 75 / 1000`),
    narration: `('Payment for order ' || (i % 100000))`,
    reference: `CASE WHEN i % 4 = 0 THEN 'REF' || ${d.pad('i', 12)} END`,
    source: `('0' || ${d.pad('(i * 31) % 999999999', 9)})`,
    name: pick(NAMES, `(i % ${NAMES.length})`),
    bank: pick(BANKS, `((i / 7) % ${BANKS.length})`),
    channel: `('' || (i % 3 + 1))`,
    bankTime: d.isoSeconds('at + 3600'),
  };
  // The body as the bank sends it (JSON.stringify's spacing); every value is plain text without quotes.
  const field = (name: string, value: string, last = false) => `'"${name}":"' || (${value}) || '"${last ? '' : ','}'`;
  const body = [
    `'{' || ${field('sessionId', v.session)}`, field('accountNumber', 'account'), field('tranRemarks', v.narration),
    field('transactionAmount', v.amount), field('settledAmount', v.settled), field('feeAmount', v.fee), field('vatAmount', v.vat),
    field('currency', `'NGN'`), field('initiationTranRef', `coalesce(${v.reference}, '')`), field('settlementId', v.settlement),
    field('sourceAccountNumber', v.source), field('sourceAccountName', v.name), field('sourceBankName', v.bank),
    field('channelId', v.channel), `${field('tranDateTime', `replace(${v.bankTime}, 'T', ' ')`, true)} || '}'`,
  ].join(' || ');
  return `SELECT ${v.settlement}, ${v.session}, account, ${v.amount}, ${v.settled}, ${v.fee}, ${v.vat}, 'NGN', ${v.narration},
      ${v.reference}, ${v.source}, ${v.name}, ${v.bank}, ${v.channel}, ${v.bankTime} || '+01:00',
      ${d.isoSeconds('at + 2')} || '.' || ${d.pad('i % 1000', 3)} || 'Z', (${body})
    FROM (${base}) AS r`;
}

/** A column a later migration added: what the fill must know to leave it to the database. */
interface Column {
  name: string;
  notNull: boolean;
  hasDefault: boolean;
}

/** Throws, naming it, for a NOT NULL column the fill does not fill and the database cannot default. */
function checkColumns(columns: Column[]): void {
  const known = new Set<string>(['seq', ...FILL_COLUMNS]);
  const missing = columns.filter((c) => !known.has(c.name) && c.notNull && !c.hasDefault).map((c) => c.name);
  if (missing.length > 0) {
    throw new Error(`collection_notifications has NOT NULL column(s) without a default that fill-store.ts does not fill: ${missing.join(', ')}; teach it (scripts/bench/fill-store.ts) to fill them`);
  }
}

/** Inserts the rows `[from, to]` in one statement and one commit. */
type InsertChunk = (from: number, to: number) => Promise<void>;

interface Connection {
  columns(): Promise<Column[]>;
  count(): Promise<number>;
  highestFilled(): Promise<number>;
  insertChunk: InsertChunk;
  /** Leaves the store as a long-running one would be: statistics and visibility up to date, the WAL folded in and on disk. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** The index fillSettlementId made `settlementId` from; 0 for none. */
const fillIndexOf = (settlementId: unknown) => (typeof settlementId === 'string' ? Number(settlementId.slice(1)) : 0);

const HIGHEST_FILLED = `SELECT settlement_id FROM collection_notifications
  WHERE settlement_id >= '900000000000000' AND settlement_id <= '999999999999999' ORDER BY settlement_id DESC LIMIT 1`;

async function connectPostgres(url: string, epoch: number): Promise<Connection> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const insert = POSTGRES.insert(rowsSelect(POSTGRES, epoch));
  return {
    async columns() {
      const { rows } = await client.query<{ name: string; nullable: string; def: string | null; identity: string; generated: string }>(
        `SELECT column_name AS name, is_nullable AS nullable, column_default AS def, is_identity AS identity, is_generated AS generated
         FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'collection_notifications'`,
      );
      return rows.map((r) => ({ name: r.name, notNull: r.nullable === 'NO', hasDefault: r.def !== null || r.identity === 'YES' || r.generated !== 'NEVER' }));
    },
    count: async () => Number((await client.query('SELECT count(*) AS n FROM collection_notifications')).rows[0]?.n),
    highestFilled: async () => fillIndexOf((await client.query(HIGHEST_FILLED)).rows[0]?.settlement_id),
    insertChunk: async (from, to) => void (await client.query(insert, [from, to])),
    async settle() {
      await client.query('VACUUM (ANALYZE) collection_notifications');
      // The fill's WAL written out now, not by a checkpoint in the middle of the next measurements.
      // Needs superuser or pg_checkpoint; without them the server's own checkpoints do it later.
      await client.query('CHECKPOINT').catch(() => undefined);
    },
    close: () => client.end(),
  };
}

// Migration 002's UPDATE that fills the summary columns of the rows stored before it (the last
// statement of its kind there, ending with the join on seq).
const SUMMARY_BACKFILL = /^UPDATE collection_notifications AS n SET\b[^;]*\bWHERE k\.seq = n\.seq;$/m;

/** Migration 002's backfill of SQLite's summary columns, read from the migration, for the rows after a seq (its parameter). */
export async function sqliteSummaryBackfill(): Promise<string> {
  const migration = (await loadMigrations('sqlite')).find((m) => m.name === 'collection_summaries');
  const statement = migration && SUMMARY_BACKFILL.exec(migration.sql)?.[0];
  if (!statement) {
    throw new Error('SQLite migration collection_summaries no longer holds its backfill (UPDATE … WHERE k.seq = n.seq;): teach scripts/bench/fill-store.ts to fill the summary columns');
  }
  // SQLite carries the seq range into the FROM subquery, which it flattens: the chunk's rows alone.
  return `${statement.slice(0, -1)} AND n.seq > ?`;
}

async function connectSqlite(path: string, epoch: number): Promise<Connection> {
  const database = new DatabaseSync(path, { timeout: 5_000 });
  database.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL');
  const insert = database.prepare(SQLITE.insert(rowsSelect(SQLITE, epoch)));
  const backfill = database.prepare(await sqliteSummaryBackfill());
  const lastSeq = database.prepare('SELECT coalesce(max(seq), 0) AS seq FROM collection_notifications');
  return {
    async columns() {
      // table_xinfo: hidden 2 and 3 are generated columns, which take no value.
      const rows = database.prepare('SELECT name, "notnull" AS nn, dflt_value AS def, hidden FROM pragma_table_xinfo(?)').all('collection_notifications');
      return rows.map((r) => ({ name: String(r.name), notNull: r.nn === 1, hasDefault: r.def !== null || Number(r.hidden) >= 2 }));
    },
    count: async () => Number(database.prepare('SELECT count(*) AS n FROM collection_notifications').get()?.n),
    highestFilled: async () => fillIndexOf(database.prepare(HIGHEST_FILLED).get()?.settlement_id),
    async insertChunk(from, to) {
      database.exec('BEGIN IMMEDIATE');
      try {
        const before = lastSeq.get()!.seq!;
        // BigInt: a JS number is bound as REAL, and i must be an integer for its / and %.
        insert.run(BigInt(from), BigInt(to));
        backfill.run(before);
        database.exec('COMMIT');
      } catch (error) {
        database.exec('ROLLBACK');
        throw error;
      }
    },
    settle: async () => void database.exec('PRAGMA wal_checkpoint(TRUNCATE)'),
    close: async () => database.close(),
  };
}

export interface FillOptions {
  /** How many to add; or, with `upTo`, at least how many. */
  rows: number;
  /** Adds what the store lacks to hold this many notifications in all, and never fewer than `rows`. */
  upTo?: number | undefined;
  /** The index of the first row; by default one past the highest already filled. */
  from?: number | undefined;
  /** Where the progress lines go; stderr by default. */
  progress?: (line: string) => void;
}

export interface FillResult {
  /** Indexes of the first and last rows filled (fillSettlementId gives their settlementIds). */
  from: number;
  to: number;
  seconds: number;
  /** Notifications the store holds now, counted. */
  total: number;
}

/** Migrates the store at `storeUrl` through the store itself, then fills `rows` notifications into it. */
export async function fillStore(storeUrl: string, options: FillOptions): Promise<FillResult> {
  const progress = options.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  await (await createNotificationStore(storeUrl, { logger: pino({ level: 'silent' }) })).close();
  // A year back from today's midnight (UTC): the rows end about now for a million of them.
  const epoch = Math.floor(Date.now() / 86_400_000) * 86_400 - 365 * 86_400;
  const connection = storeUrl.startsWith('sqlite:')
    ? await connectSqlite(storeUrl.slice('sqlite:'.length), epoch)
    : await connectPostgres(storeUrl, epoch);
  try {
    checkColumns(await connection.columns());
    const from = options.from ?? (await connection.highestFilled()) + 1;
    const rows = options.upTo === undefined ? options.rows : Math.max(options.rows, options.upTo - (await connection.count()));
    const to = from + rows - 1;
    const started = performance.now();
    let lastLine = started;
    for (let first = from; first <= to; first += CHUNK_ROWS) {
      await connection.insertChunk(first, Math.min(first + CHUNK_ROWS - 1, to));
      const now = performance.now();
      const done = Math.min(first + CHUNK_ROWS - 1, to) - from + 1;
      if (now - lastLine >= PROGRESS_EVERY_MS || done === rows) {
        lastLine = now;
        const rate = done / ((now - started) / 1000);
        progress(`  fill: ${done.toLocaleString('en')} of ${rows.toLocaleString('en')} notifications (${Math.round(rate).toLocaleString('en')} rows/s)`);
      }
    }
    const seconds = (performance.now() - started) / 1000;
    await connection.settle();
    return { from, to, seconds, total: await connection.count() };
  } finally {
    await connection.close();
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { store: { type: 'string' }, rows: { type: 'string' }, from: { type: 'string' }, 'up-to': { type: 'boolean' } } });
  const rows = Number(values.rows);
  if (!values.store || !Number.isSafeInteger(rows) || rows < 1 || (values.from !== undefined && !/^\d+$/.test(values.from))) {
    console.error('usage: node scripts/bench/fill-store.ts --store <sqlite:path | postgres://…> --rows <count> [--from <index>] [--up-to]');
    console.error('  adds <count> notifications; with --up-to, what the store lacks to hold <count> in all');
    process.exit(2);
  }
  const from = values.from === undefined ? undefined : Number(values.from);
  const result = await fillStore(values.store, values['up-to'] ? { rows: 0, upTo: rows, from } : { rows, from });
  console.error(`filled notifications ${result.from} to ${result.to} in ${result.seconds.toFixed(1)} s; the store holds ${result.total}`);
}
