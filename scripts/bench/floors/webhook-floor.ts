// What both webhook floors share (floors/receiver.ts on SQLite, floors/pg-receiver.ts on PostgreSQL):
// the bank's rules and reply, on a bare node:http server. Checks Client-Id and X-Auth-Signature,
// parses the JSON, and hands each valid delivery to the floor's store, which answers it (00, 01, 03)
// once its batch is committed. Every delivery that arrives in one event-loop turn joins one batch.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { sandboxCredentials } from '../../../src/sandbox/credentials.ts';
import { hostHttpServer } from '../host.ts';

const MESSAGES = { '00': 'success', '01': 'duplicate transaction', '02': 'rejected transaction', '03': 'the service failure, retry' };
export type Code = keyof typeof MESSAGES;

/** A delivery that passed the checks, waiting for its batch's commit. */
export interface Delivery {
  settlementId: string;
  sessionId: string;
  body: string;
  /** The body's JSON object, parsed once (a receiver storing our row normalises its fields). */
  fields: Record<string, unknown>;
  response: ServerResponse;
}

const clientId = sandboxCredentials.webhookClientId;
const expectedSignature = Buffer.from(
  createHash('sha512').update(`${clientId}:${sandboxCredentials.webhookClientSecret}`).digest('hex').toUpperCase(),
);

/** Answers in the bank's shape. */
export function reply(response: ServerResponse, sessionId: string, code: Code): void {
  const body = JSON.stringify({ requestSuccessful: true, sessionId, responseMessage: MESSAGES[code], responseCode: code });
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

/**
 * The codes of a batch from the settlementIds its statement stored: 00 for the first delivery of each
 * of them, 01 for every other (already stored, or a second delivery of one id in the same batch).
 */
export function codesFor(batch: readonly Delivery[], stored: Iterable<string>): Code[] {
  const unanswered = new Set(stored);
  return batch.map((item) => (unanswered.delete(item.settlementId) ? '00' : '01'));
}

function signed(headers: Record<string, string | string[] | undefined>): boolean {
  const signature = Buffer.from(String(headers['x-auth-signature'] ?? '').toUpperCase());
  const idMatches = headers['client-id'] === clientId;
  return idMatches && signature.length === expectedSignature.length && timingSafeEqual(signature, expectedSignature);
}

/** What a floor's store does with a turn's deliveries: writes them and answers each. */
export interface FloorStore {
  /** Writes the batch (one transaction) and replies to every delivery in it. */
  commit(batch: Delivery[]): void;
  close(): Promise<void>;
}

/** Serves the webhook on node:http with the bank's rules, batching per turn into `store`; hosted for the bench. */
export async function serveWebhookFloor(store: FloorStore): Promise<void> {
  let queue: Delivery[] = [];
  const commitQueue = () => {
    const batch = queue;
    queue = [];
    store.commit(batch);
  };
  const accept = (body: string, response: ServerResponse) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return reply(response, '', '02');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return reply(response, '', '02');
    const fields = parsed as Record<string, unknown>;
    const sessionId = typeof fields.sessionId === 'string' ? fields.sessionId : '';
    if (typeof fields.settlementId !== 'string' || fields.settlementId === '') return reply(response, sessionId, '02');
    if (queue.length === 0) setImmediate(commitQueue);
    queue.push({ settlementId: fields.settlementId, sessionId, body, fields, response });
  };
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
  await hostHttpServer(server, { closed: () => store.close() });
}
