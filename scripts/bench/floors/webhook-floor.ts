// What both webhook floors share (floors/receiver.ts on SQLite, floors/pg-receiver.ts on PostgreSQL):
// the bank's rules and reply on a bare node:http server. The signature is decided from the headers
// before the body is parsed (a refused one's body is read only for its sessionId); each valid body joins the batch of its event-loop turn (group commit),
// and is answered (00, 01, 03) only once the floor's store has committed that batch. A body refused
// for its content is kept in the quarantine table the same way, its turn's in one statement, and
// answered 02 only once committed (03 when that fails), as the contract asks of ours.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { sandboxCredentials } from '../../../src/sandbox/credentials.ts';
import { hostHttpServer } from '../host.ts';
import { readDelivery, type FloorRefusal, type FloorRow } from './row.ts';

const MESSAGES = { '00': 'success', '01': 'duplicate transaction', '02': 'rejected transaction', '03': 'the service failure, retry' };
export type Code = keyof typeof MESSAGES;

/** A delivery waiting for its batch's commit. */
export interface Delivery {
  row: FloorRow;
  response: ServerResponse;
}

/** A refused delivery waiting for its batch's commit to the quarantine. */
export interface Refused {
  refusal: FloorRefusal;
  body: Buffer;
  response: ServerResponse;
}

/** What a floor's store does with a turn's deliveries, and with its refusals: writes them (one statement each) and answers each. */
export interface FloorStore {
  commit(batch: Delivery[]): void;
  keep(batch: Refused[]): void;
  close(): Promise<void>;
}

const clientId = sandboxCredentials.webhookClientId;
const expected = Buffer.from(
  createHash('sha512').update(`${clientId}:${sandboxCredentials.webhookClientSecret}`).digest('hex').toUpperCase(),
);

function signed(headers: IncomingHttpHeaders): boolean {
  const signature = Buffer.from(String(headers['x-auth-signature'] ?? '').toUpperCase());
  return headers['client-id'] === clientId && signature.length === expected.length && timingSafeEqual(signature, expected);
}

/** The body's sessionId when it is a JSON object carrying one as text, else `''`. */
function sessionIdOf(body: string): string {
  try {
    const sessionId: unknown = JSON.parse(body)?.sessionId;
    return typeof sessionId === 'string' ? sessionId : '';
  } catch {
    return '';
  }
}

/** Answers in the bank's shape. */
export function reply(response: ServerResponse, sessionId: string, code: Code): void {
  const body = JSON.stringify({ requestSuccessful: true, sessionId, responseMessage: MESSAGES[code], responseCode: code });
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

/**
 * Answers a committed batch from the settlementIds its statement stored: 00 for the first delivery
 * of each, 01 for every other (stored before, or twice in the batch); `stored` undefined: all 03.
 */
export function answer(batch: readonly Delivery[], stored: Iterable<string> | undefined): void {
  const unanswered = new Set(stored);
  for (const { row, response } of batch) {
    reply(response, row.sessionId, stored === undefined ? '03' : unanswered.delete(row.settlementId) ? '00' : '01');
  }
}

/** Answers a turn's refusals once their quarantine rows are committed (`kept`), else 03. */
export function answerRefused(batch: readonly Refused[], kept: boolean): void {
  for (const { refusal, response } of batch) reply(response, refusal.sessionId, kept ? '02' : '03');
}

/** Serves the webhook with the bank's rules, batching each turn's deliveries and refusals into `store`. */
export async function serveWebhookFloor(store: FloorStore): Promise<void> {
  let queue: Delivery[] = [];
  let refusals: Refused[] = [];
  const commitQueue = () => {
    const batch = queue;
    queue = [];
    store.commit(batch);
  };
  const keepRefusals = () => {
    const batch = refusals;
    refusals = [];
    store.keep(batch);
  };
  const server = createServer((request, response) => {
    if (request.method !== 'POST' || request.url !== '/webhooks/collection') return void response.writeHead(404).end();
    const isSigned = signed(request.headers);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const body = bytes.toString('utf8');
      // Refused on its headers, the body read only for the sessionId the reply echoes.
      if (!isSigned) return reply(response, sessionIdOf(body), '02');
      const read = readDelivery(body);
      if ('refused' in read) {
        if (refusals.length === 0) setImmediate(keepRefusals);
        return void refusals.push({ refusal: read.refused, body: bytes, response });
      }
      if (queue.length === 0) setImmediate(commitQueue);
      queue.push({ row: read.row, response });
    });
  });
  await hostHttpServer(server, { closed: () => store.close() });
}
