import type { Server } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import WebSocket, { WebSocketServer } from 'ws';
import { createContext, type Services } from '../context.ts';
import type { OperationLimits } from '../limits/operation-limits.ts';
import type { Secret } from '../secret.ts';
import { traceSubscriptionEvent, traced, tracedExecute, withUpgradeTrace } from '../telemetry/websocket.ts';
import { createSubscriptionFanout } from './fanout/index.ts';
import { formatWebSocketError, maskExecutionResult } from './format-error.ts';
import { GRAPHQL_PATH } from './graphql.ts';
import { checkWebSocketOperation } from './operation-limit-hooks.ts';
import { ROUTER_SECRET_HEADER, routerSecretAccepted } from './router-secret.ts';

/** A ping this often, and a socket whose ping is unanswered by the next is ended: graphql-ws's own default. */
const KEEP_ALIVE_MS = 12_000;

/** What graphql-ws would send, were the socket still open, for an error that is the socket's own end. */
const CONNECTION_GONE = { message: 'The connection closed.', extensions: { code: 'INTERNAL_SERVER_ERROR' } };

export interface SubscriptionServer {
  /** Closes every client with 1001 (going away) and stops accepting upgrades. */
  dispose(): Promise<void>;
}

export interface SubscriptionServerOptions {
  /** How often each socket is pinged; unanswered by the next ping, it is ended. */
  keepAliveMs?: number;
}

/**
 * Subscriptions over the `graphql-transport-ws` protocol on the same port and path as HTTP
 * GraphQL (`GET /graphql` with an Upgrade). With ROUTER_SECRET set, a connection must carry it,
 * as the upgrade request's Router-Secret header or as `Router-Secret` in connectionParams.
 * Subscribers of the same operation and variables share one execution (see ./fanout/).
 */
export function attachSubscriptionServer(
  server: Server,
  { schema, services, routerSecret, limits }: { schema: GraphQLSchema; services: Services; routerSecret: Secret | undefined; limits: OperationLimits },
  options: SubscriptionServerOptions = {},
): SubscriptionServer {
  const wss = new WebSocketServer({ server, path: GRAPHQL_PATH });
  const { logger, metrics } = services;
  const fanout = createSubscriptionFanout({ logger, metrics, sharedContext: () => createContext(services) });
  keepAlive(wss, options.keepAliveMs ?? KEEP_ALIVE_MS, (socket) => fanout.unresponsive(socket));
  const disposable = useServer(
    {
      schema,
      // The same document limits and bank-call estimate as over HTTP: Apollo's plugins never see these.
      onSubscribe: (_ctx, _id, payload) => checkWebSocketOperation(schema, limits, payload),
      // Each operation's spans are children of the upgrade request's traceparent (the router's).
      // An operation's stream that falls too far behind closes the socket it writes to with 1013.
      context: ({ extra }, id, request, args) => {
        const contextValue = createContext(services, { connection: fanout.connection(extra.socket) });
        return withUpgradeTrace(fanout.bind(contextValue, { socket: extra.socket, id, request }), extra.request.headers, args);
      },
      execute: tracedExecute,
      subscribe: traced((args) => fanout.subscribe(args)),
      onConnect: ({ extra, connectionParams }) => {
        const provided =
          extra.request.headers[ROUTER_SECRET_HEADER] ?? connectionParams?.['Router-Secret'] ?? connectionParams?.[ROUTER_SECRET_HEADER];
        // false closes the socket with 4403 Forbidden.
        return routerSecretAccepted(routerSecret, provided);
      },
      // Execution errors over WebSocket get the same masking as over HTTP (shared executions mask their own).
      onNext: (_ctx, _id, _payload, args, result) =>
        traceSubscriptionEvent(args, result.errors !== undefined, () => maskExecutionResult(result, logger)),
      // Validation errors, and errors thrown by a stream mid-way, which graphql-ws would send raw.
      onError: ({ extra }, id, _payload, errors) => {
        // The socket is gone (closed for falling behind, or by the keep-alive): nothing reaches the
        // client, and the error is the cancelled write of a frame to it, not a fault of ours.
        if (extra.socket.readyState !== WebSocket.OPEN) {
          logger.debug({ subscriptionId: id, errors: errors.map((e) => e.message) }, 'subscription ended with its socket');
          return errors.map(() => CONNECTION_GONE);
        }
        const formatted = errors.map((error) => formatWebSocketError(error, logger));
        // Internal faults are logged in full by formatError; this line carries only what the client saw.
        logger.warn({ subscriptionId: id, errors: formatted.map((e) => e.message) }, 'subscription operation failed');
        return formatted;
      },
    },
    wss,
    // Off: ours below ends an unresponsive socket that stopped reading with 1013, not a cut.
    0,
  );
  return { dispose: async () => disposable.dispose() };
}

/**
 * graphql-ws's keep-alive, with our verdict: every socket is pinged each `intervalMs`, and one that
 * has not answered by the next ping is handed to `unresponsive`.
 */
function keepAlive(wss: WebSocketServer, intervalMs: number, unresponsive: (socket: WebSocket) => void): void {
  wss.on('connection', (socket) => {
    let answered = true;
    socket.on('pong', () => (answered = true));
    const timer = setInterval(() => {
      if (socket.readyState !== WebSocket.OPEN) return;
      if (!answered) return unresponsive(socket);
      answered = false;
      socket.ping();
    }, intervalMs);
    socket.once('close', () => clearInterval(timer));
  });
}
