// The collection webhook's HTTP side, answered on the HTTP edge ahead of Fastify's router: the money
// path is held to a bare node:http receiver, and Fastify's per-request pipeline was the largest
// cost left between them (docs/benchmarks.md, "What shapes the code"). The edge (server/http-edge.ts) gives it what it gives
// Fastify: the server's timeouts, the drain, the client address and request timing; this route adds
// the body limit (413) and the log line with a request id. Every other request, and every other
// method on these paths, goes on to Fastify untouched.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { traceWebhookDelivery } from '../telemetry/webhook.ts';
import { createDeliveryHandler, recordVerdict, replyBody, type DeliveryDeps, type DeliveryHandler, type Verdict } from './delivery.ts';
import { boundedSessionIdOf } from './body-scan.ts';
import { readSessionId } from './notification.ts';

/** The webhook's paths: ours, and the one the bank's documentation shows under its test base. */
export const WEBHOOK_PATHS = ['/webhooks/collection', '/v1/webhook'] as const;
export interface WebhookRouteDeps extends DeliveryDeps {
  /**
   * `WEBHOOK_MAX_BODY_BYTES`: a body above it is refused with 413 as soon as the limit is passed, the
   * rest unread, so no sender makes the process hold more than this of one delivery.
   */
  maxBodyBytes: number;
  /** The HTTP edge: the client address (TRUST_PROXY), and where each reply is timed. */
  edge: {
    clientAddress(request: IncomingMessage): string;
    responded(request: { method: string; route: string; statusCode: number }, seconds: number): void;
  };
}

/** Takes `request` when it is a POST to a webhook path (then answers it); `false` leaves it to Fastify. */
export type WebhookRoute = (request: IncomingMessage, response: ServerResponse) => boolean;

/** The collection webhook (op 14) on node:http; see the top of this file for why not on Fastify. */
export function createWebhookRoute(deps: WebhookRouteDeps): WebhookRoute {
  const handler = createDeliveryHandler(deps);
  // Exported as 0 from the start, so a replica's first delivery counts as an increase in PromQL.
  deps.metrics.webhookReplies.inc({ response_code: '00', reason: 'accepted' }, 0);
  let served = 0;

  return (request, response) => {
    if (request.method !== 'POST') return false;
    const path = routeOf(request.url);
    if (path === undefined) return false;
    const serving: Serving = { deps, handler, reqId: `webhook-${(served += 1).toString(36)}`, path, started: performance.now() };
    traceWebhookDelivery({ method: 'POST', headers: request.headers }, path, () => serve(request, response, serving)).catch(
      (error: unknown) => {
        deps.logger.error({ err: error, reqId: serving.reqId }, 'collection notification: the reply could not be written');
        response.destroy();
      },
    );
    return true;
  };
}

/** The webhook path `url` names (its query string aside), or undefined for any other. */
function routeOf(url: string | undefined): (typeof WEBHOOK_PATHS)[number] | undefined {
  const path = url === undefined ? '' : url.split('?', 1)[0];
  return WEBHOOK_PATHS.find((candidate) => candidate === path);
}

/** One delivery being served: what answers it, and what its log line and timing need. */
interface Serving {
  deps: WebhookRouteDeps;
  handler: DeliveryHandler;
  reqId: string;
  path: (typeof WEBHOOK_PATHS)[number];
  /** performance.now() when the request arrived. */
  started: number;
}

async function serve(request: IncomingMessage, response: ServerResponse, serving: Serving): Promise<void> {
  const { deps, handler, reqId } = serving;
  // Decided from the headers alone: a sender without the address costs no read, one without the
  // signature a read for the sessionId to echo and no parse beyond it.
  const refusal = handler.admit({
    clientId: header(request, 'client-id'),
    signature: header(request, 'x-auth-signature'),
    sourceAddress: deps.edge.clientAddress(request),
  });
  if (refusal && !refusal.echoesBody) {
    refusal.details = { reqId, ...refusal.details };
    recordVerdict(deps, refusal);
    // The body is left unread, so the connection cannot carry another request after it.
    return send(response, serving, 200, refusal, { connection: 'close' });
  }

  const body = await readBody(request, deps.maxBodyBytes);
  if (body === 'aborted') {
    // Nobody to answer, and nothing stored: the bank, seeing no reply, sends it again.
    deps.logger.warn({ reqId }, 'collection notification: the sender hung up before the body ended; nothing stored');
    return;
  }
  if ('tooLarge' in body) {
    const verdict: Verdict = refusal ?? (await handler.refuseTooLarge(body.tooLarge));
    verdict.details = { reqId, ...verdict.details };
    recordVerdict(deps, verdict);
    // The rest of the body is never read: the connection cannot carry another request after it.
    return send(response, serving, 413, verdict, { connection: 'close' });
  }
  if (refusal) {
    // Unauthenticated: it gets what it sent, cut short, and one short log line; its body is never parsed.
    refusal.sessionId = boundedSessionIdOf(body.bytes);
    refusal.details = { reqId, ...refusal.details };
    recordVerdict(deps, refusal);
    return send(response, serving, 200, refusal);
  }

  const text = body.bytes.toString('utf8');
  let verdict: Verdict;
  try {
    verdict = await handler.decide({ bytes: body.bytes, text });
  } catch (error) {
    // A fault of ours, not of the delivery: nothing was stored, so the bank's retry can succeed.
    verdict = { code: '03', reason: 'internal_error', sessionId: echoedSessionId(text), details: { err: error } };
  }
  verdict.details = { reqId, ...verdict.details };
  recordVerdict(deps, verdict);
  send(response, serving, 200, verdict);
}

/** The sessionId a 03 echoes: whatever failed while deciding must not fail its reply too. */
function echoedSessionId(text: string): string {
  try {
    return readSessionId(text);
  } catch {
    return '';
  }
}

/** A body read whole, or what was read of one over the limit. */
type Body = { bytes: Buffer } | { tooLarge: Buffer };

/**
 * The body; `tooLarge` (with what was read, none when the declared length was over) once it passes
 * the limit, 'aborted' if the client left before its end.
 */
function readBody(request: IncomingMessage, limit: number): Promise<Body | 'aborted'> {
  if (Number(request.headers['content-length']) > limit) return Promise.resolve({ tooLarge: Buffer.alloc(0) });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Every listener goes once the body is settled: a request left with an 'error' listener ends
    // through an extra tick of Node's, on every delivery.
    const settle = (body: Body | 'aborted') => {
      request.off('data', onData).off('end', onEnd).off('error', onAborted).off('close', onAborted);
      resolve(body);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      chunks.push(chunk.subarray(0, chunk.length - (size - limit)));
      settle({ tooLarge: Buffer.concat(chunks, limit) });
    };
    const onEnd = () => settle({ bytes: Buffer.concat(chunks, size) });
    // The bank hung up before the end.
    const onAborted = () => settle('aborted');
    request.on('data', onData).on('end', onEnd).on('error', onAborted).on('close', onAborted);
  });
}

/** Writes the reply in the bank's shape, and tells the edge (timing, the drain) it was written. */
function send(
  response: ServerResponse,
  serving: Serving,
  status: number,
  { code, sessionId }: Verdict,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(replyBody(sessionId, code));
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  response.end(payload);
  serving.deps.edge.responded({ method: 'POST', route: serving.path, statusCode: status }, (performance.now() - serving.started) / 1000);
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
