import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { request } from 'undici';
import type { TestApp } from './app.ts';
import { listenOnLoopback } from './loopback.ts';

/** A message of Apollo Router's HTTP callback protocol, as the subgraph POSTs it to the router. */
export interface CallbackMessage {
  kind: 'subscription';
  action: 'check' | 'next' | 'complete' | 'heartbeat';
  id: string;
  verifier: string;
  payload?: { data?: any; errors?: any[] };
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  headers: IncomingHttpHeaders;
}

/**
 * What the stand-in router answers a message with: an HTTP status, or `'hang'` (it never answers,
 * as a router that is stuck).
 */
export type CallbackAnswer = (message: CallbackMessage) => number | 'hang';

/** The protocol's replies: `check` 200, the rest 204. */
const PROTOCOL_ANSWER: CallbackAnswer = (message) => (message.action === 'check' ? 200 : 204);

/**
 * A stand-in for the router's callback endpoint: records every message and answers it as `answer`
 * says (by default, the protocol's replies). `nth(action, n)` resolves once n such messages came.
 */
export async function startCallbackRouter(answer: CallbackAnswer = PROTOCOL_ANSWER) {
  const messages: CallbackMessage[] = [];
  let waiters: { action: string; count: number; resolve: (m: CallbackMessage) => void }[] = [];
  const settle = () => {
    waiters = waiters.filter((w) => {
      const matching = messages.filter((m) => m.action === w.action);
      if (matching.length < w.count) return true;
      w.resolve(matching[w.count - 1]!);
      return false;
    });
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const message = { ...JSON.parse(body), headers: req.headers } as CallbackMessage;
      messages.push(message);
      const status = answer(message);
      if (status !== 'hang') res.writeHead(status).end();
      settle();
    });
  });
  const origin = await listenOnLoopback(server);
  return {
    callbackUrl: `${origin}/callback/${randomUUID()}`,
    messages,
    nth(action: CallbackMessage['action'], count = 1): Promise<CallbackMessage> {
      return new Promise((resolve) => {
        waiters.push({ action, count, resolve });
        settle();
      });
    },
  };
}

/** Starts a subscription the way the router does: POST /graphql with `extensions.subscription`. */
export async function subscribeViaCallback(
  app: TestApp,
  callbackUrl: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  /** Over the extension's defaults (no heartbeats): `heartbeatIntervalMs`, say. */
  extension: Record<string, unknown> = {},
) {
  const subscriptionId = randomUUID();
  const verifier = randomUUID();
  const response = await request(app.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json;callbackSpec=1.0', ...headers },
    body: JSON.stringify({
      query,
      variables,
      extensions: { subscription: { callbackUrl, subscriptionId, verifier, heartbeatIntervalMs: 0, ...extension } },
    }),
  });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown>, subscriptionId, verifier };
}
