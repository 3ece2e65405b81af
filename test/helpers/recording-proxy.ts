/**
 * A recording HTTP proxy for tests of the wire format. Put between a client and a bank (the
 * sandbox), it keeps each request as the client sent it, every secret as a keyed fingerprint
 * (request-log.ts), then forwards it as sent and relays the answer. The bank keeps no log of its own.
 *
 *   const proxy = await startRecordingProxy(bankOrigin);
 *   // point the client at proxy.url instead of bankOrigin; proxy.received lists what it sent
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent } from 'undici';
import { onCleanup } from './cleanup.ts';
import { listenOnLoopback } from './loopback.ts';
import { createRequestLog, type ReceivedRequest, type RequestLog } from './request-log.ts';

export type { ReceivedRequest };

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>`: stands for the target's origin, every path alike. */
  url: string;
  /** Every request received, oldest first, each secret as its `fingerprint`; complete before it is forwarded. */
  received: ReceivedRequest[];
  /** What `received` shows in place of a secret `value`; compare with it to check which credential was sent. */
  fingerprint(value: string): string;
}

/** Headers of one connection, not of the request: Node and undici write their own. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/**
 * Starts a recording proxy to `target` (an origin, e.g. `http://127.0.0.1:41234`) on a free
 * loopback port, closed when the current test finishes.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const log = createRequestLog();
  const agent = new Agent();
  // Closed after the server (cleanups run newest first), dropping anything still in flight.
  onCleanup(() => agent.destroy());
  const server = createServer((request, response) => {
    // The bank unreachable: the client sees its connection reset, as it would without the proxy.
    forward(log, agent, target, request, response).catch(() => response.destroy());
  });
  const url = await listenOnLoopback(server);
  return { url, received: log.received, fingerprint: log.fingerprint };
}

async function forward(log: RequestLog, agent: Agent, target: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  const method = request.method ?? 'GET';
  const path = request.url ?? '/';
  log.record({ method, url: path, headers: request.headers, body: body.toString('utf8') });

  // The path exactly as sent (Dispatcher.request does not normalise it); undici writes host and length.
  const answer = await agent.request({
    origin: target,
    path,
    method: method,
    headers: endToEnd(request.headers, ['host', 'content-length']),
    body: body.length > 0 ? body : null,
  });
  const relayed = Buffer.from(await answer.body.arrayBuffer());
  response.statusCode = answer.statusCode;
  for (const [name, value] of Object.entries(endToEnd(answer.headers, ['content-length']))) response.setHeader(name, value);
  // Node writes the length of what is relayed.
  response.end(relayed);
}

/** `headers` without the hop-by-hop ones and `also`. */
function endToEnd(headers: IncomingHttpHeaders, also: string[]): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !also.includes(name)) kept[name] = value;
  }
  return kept;
}
