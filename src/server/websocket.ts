import type { Server } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { createContext, type Services } from '../context.ts';
import type { OperationLimits } from '../limits/operation-limits.ts';
import type { Secret } from '../secret.ts';
import { traceSubscriptionEvent, traced, tracedExecute, withUpgradeTrace } from '../telemetry/websocket.ts';
import { createSubscriptionFanout } from './fanout/index.ts';
import { formatWebSocketError, maskExecutionResult } from './format-error.ts';
import { GRAPHQL_PATH } from './graphql.ts';
import { checkWebSocketOperation } from './operation-limit-hooks.ts';
import { ROUTER_SECRET_HEADER, routerSecretAccepted } from './router-secret.ts';

export interface SubscriptionServer {
  /** Closes every client with 1001 (going away) and stops accepting upgrades. */
  dispose(): Promise<void>;
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
): SubscriptionServer {
  const wss = new WebSocketServer({ server, path: GRAPHQL_PATH });
  const { logger, metrics } = services;
  const fanout = createSubscriptionFanout({ logger, metrics });
  const disposable = useServer(
    {
      schema,
      // The same document limits and bank-call estimate as over HTTP: Apollo's plugins never see these.
      onSubscribe: (_ctx, _id, payload) => checkWebSocketOperation(schema, limits, payload),
      // Each operation's spans are children of the upgrade request's traceparent (the router's).
      context: ({ extra }, id, request, args) =>
        withUpgradeTrace(fanout.bind(createContext(services), { socket: extra.socket, id, request }), extra.request.headers, args),
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
      onError: (_ctx, id, _payload, errors) => {
        const formatted = errors.map((error) => formatWebSocketError(error, logger));
        // Internal faults are logged in full by formatError; this line carries only what the client saw.
        logger.warn({ subscriptionId: id, errors: formatted.map((e) => e.message) }, 'subscription operation failed');
        return formatted;
      },
    },
    wss,
  );
  return { dispose: async () => disposable.dispose() };
}
