// Floor for the webhook: the least a durable receiver must do. node:http + node:sqlite (WAL,
// synchronous=FULL): checks Client-Id and X-Auth-Signature, parses the JSON, inserts under a unique
// settlement_id (ON CONFLICT DO NOTHING), and answers in the bank's shape only after the commit that
// holds the delivery. Deliveries that arrive together share one commit: they are queued and the
// queue is written in one transaction per event-loop turn (group commit, batch per tick).
import { createHash, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { sandboxCredentials } from '../../../src/sandbox/credentials.ts';
import { hostForBench } from '../host.ts';

const MESSAGES = { '00': 'success', '01': 'duplicate transaction', '02': 'rejected transaction', '03': 'the service failure, retry' };
type Code = keyof typeof MESSAGES;

interface Pending {
  settlementId: string;
  sessionId: string;
  body: string;
  response: ServerResponse;
}

const clientId = sandboxCredentials.webhookClientId;
const expectedSignature = Buffer.from(
  createHash('sha512').update(`${clientId}:${sandboxCredentials.webhookClientSecret}`).digest('hex').toUpperCase(),
);

const dir = mkdtempSync(join(process.env.BENCH_DIR || tmpdir(), 'bench-receiver-'));
const db = new DatabaseSync(join(dir, 'receiver.db'));
db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
db.exec('CREATE TABLE notifications (position INTEGER PRIMARY KEY, settlement_id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, body TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO notifications (settlement_id, session_id, body) VALUES (?, ?, ?) ON CONFLICT (settlement_id) DO NOTHING');

let queue: Pending[] = [];

function reply(response: ServerResponse, sessionId: string, code: Code): void {
  const body = JSON.stringify({ requestSuccessful: true, sessionId, responseMessage: MESSAGES[code], responseCode: code });
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

/** Writes every queued delivery in one transaction; a duplicate (stored or in the batch) changes nothing: 01. */
function commitQueue(): void {
  const batch = queue;
  queue = [];
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

function signed(headers: Record<string, string | string[] | undefined>): boolean {
  const signature = Buffer.from(String(headers['x-auth-signature'] ?? '').toUpperCase());
  const idMatches = headers['client-id'] === clientId;
  return idMatches && signature.length === expectedSignature.length && timingSafeEqual(signature, expectedSignature);
}

function accept(body: string, response: ServerResponse): void {
  let parsed: { settlementId?: unknown; sessionId?: unknown };
  try {
    parsed = JSON.parse(body);
  } catch {
    return reply(response, '', '02');
  }
  const sessionId = typeof parsed.sessionId === 'string' ? parsed.sessionId : '';
  if (typeof parsed.settlementId !== 'string' || parsed.settlementId === '') return reply(response, sessionId, '02');
  if (queue.length === 0) setImmediate(commitQueue);
  queue.push({ settlementId: parsed.settlementId, sessionId, body, response });
}

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/health/ready') return void response.end('{"status":"ready"}');
  if (request.method !== 'POST' || request.url !== '/webhooks/collection') return void response.writeHead(404).end();
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    if (!signed(request.headers)) return reply(response, '', '02');
    accept(Buffer.concat(chunks).toString('utf8'), response);
  });
});

await hostForBench({
  listen: (port) =>
    new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
  subscriptions: () => 0,
  async close() {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    db.close();
    rmSync(dir, { recursive: true, force: true });
  },
});
