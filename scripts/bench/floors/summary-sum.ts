// Floor for collectionSummary: the least the database must do to answer "how much came in, in this
// range": one plain `SELECT count(*), sum(<amount>) … WHERE [account_number = ? AND] <time> >= ? AND
// <time> < ?`, on the very store ours reads (FLOOR_STORE_URL: its SQLite file or its PostgreSQL
// schema), through the same indexes and the same kinds of columns ours sums (SQLite: the kobo
// columns of migration 002; PostgreSQL: migration 003's numeric columns). Served on bare node:http
// for the same request ours gets (the GraphQL query and its variables; only the variables are read),
// and answered in the shape of ours' reply, so the load side judges both alike.
import { createServer } from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { hostHttpServer } from '../host.ts';

/** The range asked: the request's GraphQL variables. */
interface Range {
  accountNumber?: string | null;
  from: string;
  to: string;
}

/** count and the exact sum of transactionAmount, as decimal text. */
type Sum = (range: Range) => Promise<{ count: number; sum: string }>;

const storeUrl = process.env.FLOOR_STORE_URL;
if (!storeUrl) throw new Error('floors/summary-sum.ts needs FLOOR_STORE_URL (the bench sets it)');

/** kobo → "123.45". */
const naira = (kobo: bigint) => {
  const digits = kobo.toString().padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)}`;
};

function sqliteSum(path: string): { sum: Sum; close(): void } {
  const database = new DatabaseSync(path, { timeout: 5_000 });
  // The fill's amounts are under 10^7 naira: the high kobo limb is 0, the low one the whole amount.
  const sql = (account: string) =>
    database.prepare(`SELECT count(*) AS n, sum(transaction_amount_kobo_lo) AS kobo FROM collection_notifications
      WHERE ${account}event_ms >= ? AND event_ms < ?`);
  const all = sql('');
  const ofAccount = sql('account_number = ? AND ');
  for (const statement of [all, ofAccount]) statement.setReadBigInts(true);
  return {
    async sum({ accountNumber, from, to }) {
      const range = [Date.parse(from), Date.parse(to)];
      const row = accountNumber ? ofAccount.get(accountNumber, ...range) : all.get(...range);
      return { count: Number(row?.n), sum: naira((row?.kobo as bigint | null) ?? 0n) };
    },
    close: () => database.close(),
  };
}

function postgresSum(url: string): { sum: Sum; close(): Promise<void> } {
  // As many connections as ours has.
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const sql = (account: string) =>
    `SELECT count(*) AS n, sum(transaction_amount_numeric) AS amount FROM collection_notifications
      WHERE ${account}event_time >= $1 AND event_time < $2`;
  return {
    async sum({ accountNumber, from, to }) {
      const { rows } = accountNumber
        ? await pool.query({ name: 'account', text: sql('account_number = $3 AND '), values: [from, to, accountNumber] })
        : await pool.query({ name: 'all', text: sql(''), values: [from, to] });
      return { count: Number(rows[0].n), sum: rows[0].amount ?? '0.00' };
    },
    close: () => pool.end(),
  };
}

const floor = storeUrl.startsWith('sqlite:') ? sqliteSum(storeUrl.slice('sqlite:'.length)) : postgresSum(storeUrl);

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/health/ready') return void response.end('{"status":"ready"}');
  if (request.method !== 'POST' || request.url !== '/graphql') return void response.writeHead(404).end();
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const answer = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    };
    let range: Range;
    try {
      range = JSON.parse(Buffer.concat(chunks).toString('utf8')).variables;
    } catch {
      return answer(400, { errors: [{ message: 'not JSON', extensions: { code: 'BAD_REQUEST' } }] });
    }
    floor.sum(range).then(
      ({ count, sum }) => answer(200, { data: { collectionSummary: { count, transactionAmount: sum } } }),
      (error: Error) => answer(200, { errors: [{ message: error.message, extensions: { code: 'FLOOR_FAILED' } }] }),
    );
  });
});

await hostHttpServer(server, { closed: () => floor.close() });
