/**
 * The sandbox bank's collection service: it sends the partner's webhook a signed notification for
 * each transfer (op 14), keeps every one it sent, and answers ops 15 to 17 from them. Its console
 * stands in for the bank's test console: "make a transfer to account A of amount X", delivered, or
 * recorded and never delivered (lost, as when the webhook was down past the bank's retries).
 */
import { createHash } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Agent, request } from 'undici';
import type { Secret } from '../secret.ts';
import { safeEqual } from './auth.ts';
import { newTransfer, notFound, readTransferOrder, verifyAnswer, type SentTransfer } from './collection-records.ts';
import { areaErrorHandler, bodyFields, headerValue, searchParams, stringField, type Fields, type SandboxDeps } from './http.ts';

/** What the bank and the partner agreed: the partner's Client-Id and the secret both sign with. */
export interface CollectionPartner {
  clientId: string;
  clientSecret: Secret;
}

/** How one delivery to the webhook went: its HTTP answer, or why none came. */
export interface DeliveryOutcome {
  delivered: boolean;
  /** The webhook's answer: its status and body (parsed when JSON). */
  webhook?: { status: number; reply: unknown };
  /** Why nothing was delivered (no webhook known, or the transport's error code). */
  error?: string;
}

/** The collection service of one sandbox: its routes, and where it delivers. */
export interface CollectionService {
  /** Ops 15 to 17, behind the partner's Client-Id and signature. */
  apiRoutes: FastifyPluginAsync;
  /** The test console: transfers, delivered or lost, and deliveries again. */
  consoleRoutes: FastifyPluginAsync;
  /** Tells the bank where the partner's webhook is (known only once the subgraph listens). */
  deliverTo(webhookUrl: string): void;
  /** Cancels the deliveries in flight and waits for them. */
  close(): Promise<void>;
}

const DELIVERY_TIMEOUT_MS = 10_000;
// Bounds memory in a long-running sandbox; the oldest transfer is forgotten first.
const MAX_TRANSFERS = 100_000;

/** Creates one sandbox's collection service; `timezone` is the bank's, for its local times. */
export function createCollectionService(deps: SandboxDeps, partner: CollectionPartner, timezone: string): CollectionService {
  const bySettlement = new Map<string, SentTransfer>();
  const bySession = new Map<string, SentTransfer>();
  // The bank's own digest, not the subgraph's: a bug on one side cannot hide behind the same bug on the other.
  const signature = createHash('sha512').update(`${partner.clientId}:${partner.clientSecret.reveal()}`, 'utf8').digest('hex').toUpperCase();
  const agent = new Agent({ keepAliveTimeout: 1_000 });
  const closing = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  let webhookUrl: string | undefined;
  let closed: Promise<void> | undefined;

  const remember = (transfer: SentTransfer) => {
    bySettlement.set(transfer.fields.settlementId!, transfer);
    bySession.set(transfer.fields.sessionId!, transfer);
    for (const [settlementId, oldest] of bySettlement) {
      if (bySettlement.size <= MAX_TRANSFERS) break;
      bySettlement.delete(settlementId);
      bySession.delete(oldest.fields.sessionId!);
    }
  };

  const deliver = (transfer: SentTransfer): Promise<DeliveryOutcome> => {
    const delivery = sendToWebhook(transfer);
    inFlight.add(delivery);
    return delivery.finally(() => inFlight.delete(delivery));
  };

  const sendToWebhook = async (transfer: SentTransfer): Promise<DeliveryOutcome> => {
    if (webhookUrl === undefined) return { delivered: false, error: 'the bank knows no webhook URL to deliver to' };
    try {
      const response = await request(webhookUrl, {
        dispatcher: agent,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'client-id': partner.clientId, 'x-auth-signature': signature },
        body: transfer.body,
        signal: AbortSignal.any([closing.signal, AbortSignal.timeout(DELIVERY_TIMEOUT_MS)]),
      });
      const text = await response.body.text();
      const reply = parseOrText(text);
      const code = typeof reply === 'object' && reply !== null ? (reply as Fields).responseCode : undefined;
      if (response.statusCode === 200 && code === '00') transfer.acknowledged = true;
      return { delivered: true, webhook: { status: response.statusCode, reply } };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      return { delivered: false, error: typeof code === 'string' ? code : (error as Error).name };
    }
  };

  const signed = (request: FastifyRequest) => {
    const id = safeEqual(headerValue(request, 'client-id'), partner.clientId);
    const sig = safeEqual(headerValue(request, 'x-auth-signature'), signature);
    return id && sig;
  };

  const apiRoutes: FastifyPluginAsync = async (scope) => {
    scope.setErrorHandler(areaErrorHandler(deps, (status) => failure(status >= 500 ? 'System malfunction' : 'Bad request')));
    scope.addHook('preHandler', async (request, reply) => {
      if (!signed(request)) return reply.code(401).send(failure('Invalid Client-Id or X-Auth-Signature'));
    });
    const verify = (param: string, index: Map<string, SentTransfer>) => async (request: FastifyRequest, reply: FastifyReply) => {
      const id = searchParams(request).get(param) ?? '';
      if (id.trim() === '') return reply.code(400).send(failure(`${param} is required`));
      const transfer = index.get(id);
      return reply.type('application/json').send(JSON.stringify(transfer === undefined ? notFound() : verifyAnswer(transfer)));
    };
    scope.get('/PiPverifyTransaction_sessionid', verify('session_id', bySession));
    scope.get('/PiPverifyTransaction_settlementid', verify('settlement_id', bySettlement));

    scope.post('/PiP_RepushTransaction_SettlementId', async (request, reply) => {
      const fields = bodyFields(request);
      const settlementId = fields === null ? undefined : stringField(fields, 'settlement_id');
      const sessionId = fields === null ? undefined : stringField(fields, 'session_id');
      if (settlementId === undefined && sessionId === undefined) {
        return reply.code(400).send(failure('settlement_id or session_id is required'));
      }
      const transfer = settlementId !== undefined ? bySettlement.get(settlementId) : bySession.get(sessionId!);
      if (transfer === undefined || (sessionId !== undefined && transfer.fields.sessionId !== sessionId)) {
        return { requestSuccessful: false, responseCode: '25', responseMessage: 'Transaction not found' };
      }
      if (webhookUrl === undefined) {
        return { requestSuccessful: false, responseCode: '96', responseMessage: 'No notification URL is registered for this client' };
      }
      // Queued: the answer does not wait for the webhook, as the bank's does not.
      void deliver(transfer);
      return { requestSuccessful: true, responseCode: '00', responseMessage: 'Transaction has been queued for repush' };
    });
  };

  const consoleRoutes: FastifyPluginAsync = async (scope) => {
    scope.setErrorHandler(areaErrorHandler(deps, (status) => ({ error: status >= 500 ? 'the console failed' : 'bad request' })));
    scope.post('/transfers', async (request, reply) => {
      const order = readTransferOrder(bodyFields(request));
      if (typeof order === 'string') return reply.code(400).send({ error: order });
      const transfer = newTransfer(order, deps.now(), timezone);
      remember(transfer);
      const { settlementId, sessionId } = transfer.fields;
      const outcome: DeliveryOutcome & { lost?: true } = order.lost ? { delivered: false, lost: true } : await deliver(transfer);
      return reply.code(201).send({ settlementId, sessionId, notification: transfer.fields, ...outcome });
    });
    // The console's "send the notification again", answered with the webhook's reply.
    scope.post<{ Params: { settlementId: string } }>('/transfers/:settlementId/deliveries', async (request, reply) => {
      const transfer = bySettlement.get(request.params.settlementId);
      if (transfer === undefined) return reply.code(404).send({ error: 'no transfer has this settlementId' });
      const { settlementId, sessionId } = transfer.fields;
      return { settlementId, sessionId, ...(await deliver(transfer)) };
    });
  };

  return {
    apiRoutes,
    consoleRoutes,
    deliverTo(url) {
      webhookUrl = url;
    },
    close() {
      closing.abort();
      return (closed ??= Promise.allSettled(inFlight).then(() => agent.close()));
    },
  };
}

function failure(responseMessage: string): Record<string, unknown> {
  return { requestSuccessful: false, responseMessage };
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
