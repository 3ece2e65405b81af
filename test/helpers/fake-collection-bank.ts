/**
 * A stand-in for the bank's collection service (ops 15 to 17), written apart from the sandbox's so
 * a shared mistake cannot pass both: each test says what the bank holds and how it answers, and
 * reads back what reached it.
 *
 *   const bank = await startFakeCollectionBank();
 *   bank.know({ settlementId: 'S1', sessionId: 'N1', accountNumber: '0123456789', transactionAmount: '1500.00' });
 *   bank.answer('S1', { status: 503 }, 'known');   // a 503 first, then the transfer
 *   bank.answerEvery({ status: 503 });              // the bank down, whatever is asked; answerEvery() brings it back
 *   // point a client's collection URL at bank.url; bank.received lists what it was asked
 */
import { createHash } from 'node:crypto';
import { request } from 'undici';
import { testCollectionCredentials } from './bank-clients.ts';
import { startFakeBank, type FakeBankReply } from './fake-bank.ts';
import { Inbox } from './wait.ts';

/** A transfer as the bank holds it, in the bank's names. Amounts are decimal text. */
export interface FakeTransfer {
  sessionId: string;
  settlementId: string;
  accountNumber: string;
  transactionAmount: string;
  settledAmount?: string;
  feeAmount?: string;
  vatAmount?: string;
  currency?: string;
  tranRemarks?: string;
  initiationTranRef?: string;
  sourceAccountNumber?: string;
  sourceAccountName?: string;
  sourceBankCode?: string;
  sourceBankName?: string;
  channelId?: string;
  tranDateTime?: string;
  settlementDateTime?: string;
  /** 1 when the bank holds the partner's `00`. Default 1. */
  notification_acknowledgement?: number;
  /** How the amounts are written: `numbers` (default, as the bank's samples: raw number text, never through a float) or `strings`. */
  amountsAs?: 'numbers' | 'strings';
  /** Fields the bank adds that the client does not know, written as given. */
  extra?: Record<string, unknown>;
}

/**
 * How the bank answers one request:
 * - `known`: the transfer it holds under the id asked for (the not-found shape when none);
 * - `unknown`: the bank's not-found shape, whatever it holds;
 * - `queued` / `{ declined }`: op 17's answers (queued: `00`, and delivered when `deliverTo` is set);
 * - `reset`: the connection dropped; `hang`: no answer, ever;
 * - `{ status, body }`: that status and JSON body (401, 400, 500…); `{ text }`: a body that is not JSON;
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
  /** Whether Client-Id and X-Auth-Signature were the expected pair. */
  signed: boolean;
  body: string;
}

/** A notification the fake sent to the webhook after a queued op 17. */
export interface FakeDelivery {
  settlementId: string;
  status: number;
  reply: unknown;
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
  /** Where a queued op 17 sends the notification again (op 14, signed with the same pair). */
  deliverTo(webhookUrl: string): void;
  /** Requests that reached the fake for `operation` (all when omitted). */
  calls(operation?: FakeCollectionOperation): number;
}

export interface FakeCollectionOptions {
  /** The pair the fake expects (and signs deliveries with). Default the test clients' pair. */
  clientId?: string;
  clientSecret?: string;
}

/** Starts the fake on a free loopback port; closed when the test ends (as `startFakeBank`). */
export async function startFakeCollectionBank(options: FakeCollectionOptions = {}): Promise<FakeCollectionBank> {
  const clientId = options.clientId ?? testCollectionCredentials.clientId;
  const secret = options.clientSecret ?? testCollectionCredentials.clientSecret.reveal();
  // Its own digest, not the subgraph's: a mistake there must not pass here too.
  const signature = createHash('sha512').update(`${clientId}:${secret}`).digest('hex').toUpperCase();
  const transfers = new Map<string, FakeTransfer>();
  const perId = new Map<string, FakeCollectionAnswer[]>();
  let every: FakeCollectionAnswer[] = [];
  let webhookUrl: string | undefined;
  const received = new Inbox<FakeCollectionRequest>();
  const deliveries = new Inbox<FakeDelivery>();

  const next = (queue: FakeCollectionAnswer[]): FakeCollectionAnswer => (queue.length > 1 ? queue.shift()! : queue[0]!);

  const base = await startFakeBank(async (raw, reply) => {
    const asked = readRequest(raw.url, raw.body);
    const signed = raw.headers['client-id'] === clientId && raw.headers['x-auth-signature'] === signature;
    received.push({ ...asked, headers: raw.headers, signed, body: raw.body });
    // A bank that is down answers nothing else; one that is up checks the signature before anything.
    if (every.length > 0) return respond(next(every), asked, reply);
    if (!signed) return reply.status(401).json({ requestSuccessful: false, responseMessage: 'Unauthorized' });
    if (asked.operation === 'other') return reply.status(404).json({ error: 'Not Found' });
    const queue = perId.get(asked.id);
    if (queue !== undefined) return respond(next(queue), asked, reply);
    return respond(asked.operation === 'repush' ? 'queued' : 'known', asked, reply);
  });

  const respond = async (answer: FakeCollectionAnswer, asked: Asked, reply: FakeBankReply): Promise<void> => {
    if (answer === 'reset') return reply.destroy();
    if (answer === 'hang') return;
    if (answer === 'unknown') return reply.text(NOT_FOUND, 'application/json');
    if (answer === 'known') {
      const transfer = transfers.get(asked.id);
      return reply.text(transfer === undefined ? NOT_FOUND : verifyAnswerText(transfer), 'application/json');
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
    const headers = { 'content-type': 'application/json', 'client-id': clientId, 'x-auth-signature': signature };
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
    deliverTo(url) {
      webhookUrl = url;
    },
    calls: (operation) => (operation === undefined ? received.length : received.filter((r) => r.operation === operation).length),
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

const AMOUNTS = ['transactionAmount', 'settledAmount', 'feeAmount', 'vatAmount'] as const;

/** The bank's "not known", as its guide describes it: empty ids and strings, every amount `0.0`. */
const NOT_FOUND =
  '{"sessionId":"","settlementId":"","initiationTranRef":"","accountNumber":"","tranRemarks":"Transaction not found!!!",' +
  '"transactionAmount":0.0,"settledAmount":0.0,"feeAmount":0.0,"vatAmount":0.0,"currency":"","sourceAccountNumber":"",' +
  '"sourceAccountName":"","sourceBankCode":"","sourceBankName":"","channelId":"","tranDateTime":"","settlementDateTime":"",' +
  '"stamp_duty_flg":0,"post_flg":0,"notification_acknowledgement":0}';

/** Ops 15/16's body for `transfer`, amounts as raw number text (or strings), written by hand: no float ever holds them. */
function verifyAnswerText(transfer: FakeTransfer): string {
  const { amountsAs = 'numbers', extra = {}, notification_acknowledgement = 1, ...fields } = transfer;
  const values: Record<string, unknown> = {
    sessionId: fields.sessionId,
    settlementId: fields.settlementId,
    initiationTranRef: fields.initiationTranRef ?? '',
    accountNumber: fields.accountNumber,
    tranRemarks: fields.tranRemarks ?? 'Payment for order',
    transactionAmount: fields.transactionAmount,
    settledAmount: fields.settledAmount ?? fields.transactionAmount,
    feeAmount: fields.feeAmount ?? '0.0',
    vatAmount: fields.vatAmount ?? '0.0',
    currency: fields.currency ?? 'NGN',
    sourceAccountNumber: fields.sourceAccountNumber ?? '0011223344',
    sourceAccountName: fields.sourceAccountName ?? 'CHUKWUEMEKA OBI',
    sourceBankCode: fields.sourceBankCode ?? '000013',
    sourceBankName: fields.sourceBankName ?? 'GTBank',
    channelId: fields.channelId ?? '1',
    tranDateTime: fields.tranDateTime ?? '2026-11-22 14:05:09',
    settlementDateTime: fields.settlementDateTime ?? '11/22/2026 2:05:41 PM',
    stamp_duty_flg: 0,
    post_flg: 1,
    notification_acknowledgement,
    ...extra,
  };
  const members = Object.entries(values).map(([name, value]) => {
    const numeric = amountsAs === 'numbers' && (AMOUNTS as readonly string[]).includes(name);
    return `${JSON.stringify(name)}:${numeric ? String(value) : JSON.stringify(value)}`;
  });
  return `{${members.join(',')}}`;
}

/** Op 14's body for `transfer`, as the bank sends it: amounts as text. */
function notificationOf(transfer: FakeTransfer): Record<string, string> {
  return {
    sessionId: transfer.sessionId,
    accountNumber: transfer.accountNumber,
    tranRemarks: transfer.tranRemarks ?? 'Payment for order',
    transactionAmount: transfer.transactionAmount,
    settledAmount: transfer.settledAmount ?? transfer.transactionAmount,
    feeAmount: transfer.feeAmount ?? '0.00',
    vatAmount: transfer.vatAmount ?? '0.00',
    currency: transfer.currency ?? 'NGN',
    initiationTranRef: transfer.initiationTranRef ?? '',
    settlementId: transfer.settlementId,
    sourceAccountNumber: transfer.sourceAccountNumber ?? '0011223344',
    sourceAccountName: transfer.sourceAccountName ?? 'CHUKWUEMEKA OBI',
    sourceBankName: transfer.sourceBankName ?? 'GTBank',
    channelId: transfer.channelId ?? '1',
    tranDateTime: transfer.tranDateTime ?? '2026-11-22 14:05:09',
  };
}
