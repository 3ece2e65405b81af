/**
 * A stand-in for the bank's collection service (ops 15 to 17), written apart from the sandbox's so
 * a shared mistake cannot pass both: each test says what the bank holds and how it answers, and
 * reads back what reached it.
 *
 *   const bank = await startFakeCollectionBank();
 *   bank.know({ settlementId: 'S1', sessionId: 'N1', accountNumber: '0123456789', transactionAmount: '1500.00' });
 *   bank.answer('S1', { status: 503 }, 'known');   // a 503 first, then the transfer
 *   bank.answer('S2', { status: 404 });              // one id refused, whatever else is asked
 *   bank.answer('S3', { declined: '96' });           // an error envelope (HTTP 200) about one id
 *   bank.answerEvery({ status: 503 });              // the bank down, whatever is asked; answerEvery() brings it back
 *   bank.lag('S1', { asks: 1 });                     // not found once, then the transfer (verify lagging the notifier)
 *   bank.slow(200);                                  // every answer 200 ms late; bank.peakInFlight() says how many waited at once
 *   bank.asks('S1');                                 // how many times it was asked about S1
 *   // point a client's collection URL at bank.url; bank.received lists what it was asked
 *
 * Started with `previousSecret`, it plays a bank in the middle of a rotation: it accepts (and signs
 * with) only the previous secret until `switchSecret()`, then only `clientSecret`.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { testCollectionCredentials } from './bank-clients.ts';
import { startFakeBank, type FakeBankReply } from './fake-bank.ts';
import { NOT_FOUND, notificationOf, verifyAnswerText, type FakeTransfer } from './fake-collection-records.ts';
import { Inbox } from './wait.ts';

export { SAMPLE_TRANSFER, type FakeTransfer } from './fake-collection-records.ts';

/**
 * How the bank answers one request:
 * - `known`: the transfer it holds under the id asked for (the not-found shape when none, or while it lags);
 * - `unknown`: the bank's not-found shape, whatever it holds;
 * - `queued` / `{ declined }`: op 17's answers (queued: `00`, and delivered when `deliverTo` is set);
 *   `{ declined }` to ops 15/16 is the error envelope many gateways answer with HTTP 200;
 * - `reset`: the connection dropped; `hang`: no answer, ever;
 * - `{ status, body }`: that status and JSON body (401, 400, 404, 429, 500…); `{ text }`: a body as given;
 * - `{ after, answer }`: `answer`, once `after` has settled (a slow bank, released by the test).
 */
export type FakeCollectionAnswer =
  | 'known'
  | 'unknown'
  | 'queued'
  | 'reset'
  | 'hang'
  | { declined: string; message?: string }
  | { status: number; body?: unknown }
  | { text: string; contentType?: string }
  | { after: Promise<unknown>; answer: FakeCollectionAnswer };

export type FakeCollectionOperation = 'verifyBySessionId' | 'verifyBySettlementId' | 'repush' | 'other';

/** A request as the fake received it. */
export interface FakeCollectionRequest {
  operation: FakeCollectionOperation;
  /** The id asked about: the query's, or op 17's settlement_id (else session_id). */
  id: string;
  /** Op 17's body fields. */
  settlementId?: string;
  sessionId?: string;
  headers: Record<string, string | string[] | undefined>;
  /** Whether Client-Id and X-Auth-Signature were the pair the bank accepts now. */
  signed: boolean;
  /** Which secret the signature was made with, of the two the fake knows (`undefined`: neither). */
  signedWith: 'current' | 'previous' | undefined;
  body: string;
}

/** A notification the fake sent to the webhook after a queued op 17. */
export interface FakeDelivery {
  settlementId: string;
  status: number;
  reply: unknown;
}

/** How long the bank's verify service lags its notifier for one transfer: not found until both have passed. */
export interface FakeLag {
  /** Asks answered not-found before the transfer is. */
  asks?: number;
  /** Milliseconds from `lag()` during which it is not found. */
  ms?: number;
}

export interface FakeCollectionBank {
  /** The collection service's base URL (`BANK_COLLECTION_URL`). */
  url: string;
  received: Inbox<FakeCollectionRequest>;
  /** Deliveries made after a queued op 17 (with `deliverTo`). */
  deliveries: Inbox<FakeDelivery>;
  /** The bank holds `transfer` from now on, under both its ids. */
  know(transfer: FakeTransfer): void;
  /** Requests about `id` (either id of a transfer) get `answers` in turn; the last one repeats. */
  answer(id: string, ...answers: FakeCollectionAnswer[]): void;
  /** Every request gets `answers` in turn, before any per-id answer; none given: back to normal. */
  answerEvery(...answers: FakeCollectionAnswer[]): void;
  /** Ops 15/16 about the transfer under `id` (either of its ids) answer not-found while `lag` lasts. */
  lag(id: string, lag: FakeLag): void;
  /** Every answer from now on waits `ms` first (0: none), as a bank answering slowly. */
  slow(ms: number): void;
  /** Where a queued op 17 sends the notification again (op 14, signed with the same pair). */
  deliverTo(webhookUrl: string): void;
  /** Started with `previousSecret`: from now on the bank accepts (and signs with) `clientSecret` only. */
  switchSecret(): void;
  /** Requests that reached the fake for `operation` (all when omitted). */
  calls(operation?: FakeCollectionOperation): number;
  /** Requests about `id` (op 17's included unless `operation` says which). */
  asks(id: string, operation?: FakeCollectionOperation): number;
  /** The most requests it held at once, answered or not (what a slow bank saw in flight). */
  peakInFlight(): number;
}

export interface FakeCollectionOptions {
  /** The pair the fake expects (and signs deliveries with). Default the test clients' pair. */
  clientId?: string;
  clientSecret?: string;
  /** A rotation under way: the secret the bank still holds, the only one it accepts until `switchSecret()`. */
  previousSecret?: string;
  /** Every answer waits this long first (`slow()` changes it). */
  delayMs?: number;
}

/** Starts the fake on a free loopback port; closed when the test ends (as `startFakeBank`). */
export async function startFakeCollectionBank(options: FakeCollectionOptions = {}): Promise<FakeCollectionBank> {
  const clientId = options.clientId ?? testCollectionCredentials.clientId;
  // Its own digest, not the subgraph's: a mistake there must not pass here too.
  const sign = (secret: string) => createHash('sha512').update(`${clientId}:${secret}`).digest('hex').toUpperCase();
  const current = sign(options.clientSecret ?? testCollectionCredentials.clientSecret.reveal());
  const previous = options.previousSecret === undefined ? undefined : sign(options.previousSecret);
  let accepted = previous ?? current;
  const transfers = new Map<string, FakeTransfer>();
  const perId = new Map<string, FakeCollectionAnswer[]>();
  const lags = new Map<string, { asks: number; until: number }>();
  let every: FakeCollectionAnswer[] = [];
  let webhookUrl: string | undefined;
  let delayMs = options.delayMs ?? 0;
  let inFlight = 0;
  let peak = 0;
  const received = new Inbox<FakeCollectionRequest>();
  const deliveries = new Inbox<FakeDelivery>();

  const next = (queue: FakeCollectionAnswer[]): FakeCollectionAnswer => (queue.length > 1 ? queue.shift()! : queue[0]!);

  const base = await startFakeBank(async (raw, reply) => {
    inFlight += 1;
    peak = Math.max(peak, inFlight);
    try {
      await handle(raw, reply);
    } finally {
      inFlight -= 1;
    }
  });

  const handle = async (raw: { url: string; body: string; headers: FakeCollectionRequest['headers'] }, reply: FakeBankReply) => {
    const asked = readRequest(raw.url, raw.body);
    const given = raw.headers['x-auth-signature'];
    const signedWith = given === current ? 'current' : given !== undefined && given === previous ? 'previous' : undefined;
    const signed = raw.headers['client-id'] === clientId && given === accepted;
    received.push({ ...asked, headers: raw.headers, signed, signedWith, body: raw.body });
    if (delayMs > 0) await sleep(delayMs);
    // A bank that is down answers nothing else; one that is up checks the signature before anything.
    if (every.length > 0) return respond(next(every), asked, reply);
    if (!signed) return reply.status(401).json({ requestSuccessful: false, responseMessage: 'Unauthorized' });
    if (asked.operation === 'other') return reply.status(404).json({ error: 'Not Found' });
    const queue = perId.get(asked.id);
    if (queue !== undefined) return respond(next(queue), asked, reply);
    return respond(asked.operation === 'repush' ? 'queued' : 'known', asked, reply);
  };

  /** Whether the verify service does not hold this transfer yet; counts the ask when so. */
  const lagging = (asked: Asked, transfer: FakeTransfer): boolean => {
    const lag = lags.get(asked.id) ?? lags.get(transfer.settlementId) ?? lags.get(transfer.sessionId);
    if (lag === undefined || (lag.asks <= 0 && Date.now() >= lag.until)) return false;
    lag.asks -= 1;
    return true;
  };

  const respond = async (answer: FakeCollectionAnswer, asked: Asked, reply: FakeBankReply): Promise<void> => {
    if (answer === 'reset') return reply.destroy();
    if (answer === 'hang') return;
    if (answer === 'unknown') return reply.text(NOT_FOUND, 'application/json');
    if (answer === 'known') {
      const transfer = transfers.get(asked.id);
      const held = transfer !== undefined && !lagging(asked, transfer);
      return reply.text(held ? verifyAnswerText(transfer) : NOT_FOUND, 'application/json');
    }
    if (answer === 'queued') {
      const transfer = transfers.get(asked.id);
      if (transfer === undefined)
        return reply.json({ requestSuccessful: false, responseCode: '25', responseMessage: 'Transaction not found' });
      reply.json({ requestSuccessful: true, responseCode: '00', responseMessage: 'Transaction has been queued for repush' });
      if (webhookUrl !== undefined) void deliver(webhookUrl, transfer);
      return;
    }
    if ('after' in answer) {
      await answer.after.catch(() => undefined);
      return respond(answer.answer, asked, reply);
    }
    if ('declined' in answer)
      return reply.json({ requestSuccessful: false, responseCode: answer.declined, responseMessage: answer.message ?? 'Declined' });
    if ('text' in answer) return reply.text(answer.text, answer.contentType);
    return reply.status(answer.status).json(answer.body ?? { requestSuccessful: false, responseMessage: 'Failed' });
  };

  const deliver = async (url: string, transfer: FakeTransfer) => {
    const headers = { 'content-type': 'application/json', 'client-id': clientId, 'x-auth-signature': accepted };
    const response = await request(url, { method: 'POST', headers, body: JSON.stringify(notificationOf(transfer)) });
    const text = await response.body.text();
    deliveries.push({
      settlementId: transfer.settlementId,
      status: response.statusCode,
      reply: text === '' ? undefined : JSON.parse(text),
    });
  };

  return {
    url: base.url,
    received,
    deliveries,
    know(transfer) {
      transfers.set(transfer.settlementId, transfer);
      if (transfer.sessionId !== '') transfers.set(transfer.sessionId, transfer);
    },
    answer(id, ...answers) {
      perId.set(id, answers);
    },
    answerEvery(...answers) {
      every = answers;
    },
    lag(id, { asks = 0, ms = 0 }) {
      lags.set(id, { asks, until: Date.now() + ms });
    },
    slow(ms) {
      delayMs = ms;
    },
    deliverTo(url) {
      webhookUrl = url;
    },
    switchSecret() {
      accepted = current;
    },
    calls: (operation) => (operation === undefined ? received.length : received.filter((r) => r.operation === operation).length),
    asks: (id, operation) => received.filter((r) => r.id === id && (operation === undefined || r.operation === operation)).length,
    peakInFlight: () => peak,
  };
}

type Asked = Pick<FakeCollectionRequest, 'operation' | 'id' | 'settlementId' | 'sessionId'>;

function readRequest(url: string, body: string): Asked {
  const { pathname, searchParams } = new URL(url, 'http://bank');
  if (pathname === '/PiPverifyTransaction_sessionid') return { operation: 'verifyBySessionId', id: searchParams.get('session_id') ?? '' };
  if (pathname === '/PiPverifyTransaction_settlementid')
    return { operation: 'verifyBySettlementId', id: searchParams.get('settlement_id') ?? '' };
  if (pathname === '/PiP_RepushTransaction_SettlementId') {
    let fields: { settlement_id?: string; session_id?: string } = {};
    try {
      fields = JSON.parse(body) as typeof fields;
    } catch {
      // An unreadable body asks about nothing.
    }
    const settlementId = fields.settlement_id ?? '';
    const sessionId = fields.session_id ?? '';
    return { operation: 'repush', id: settlementId || sessionId, settlementId, sessionId };
  }
  return { operation: 'other', id: '' };
}
