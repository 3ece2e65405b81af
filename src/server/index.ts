import type { AddressInfo } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { createServer } from 'node:http';
import { createWebhookRoute } from '../collection/webhook-route.ts';
import type { Services } from '../context.ts';
import { createOperationLimits } from '../limits/operation-limits.ts';
import { clientAddressResolver, fastifyTrustProxy } from './client-address.ts';
import { GRAPHQL_PATH, registerGraphQL } from './graphql.ts';
import { registerHealthRoutes } from './health.ts';
import { registerMetricsRoute } from './metrics-route.ts';
import { attachSubscriptionServer, type SubscriptionServerOptions } from './websocket.ts';

/** Connections still open this long into a drain are cut, so the process exits within 10 s. */
const DRAIN_DEADLINE_MS = 7_000;

export interface HttpServer {
  fastify: FastifyInstance;
  /** Starts listening; resolves to the GraphQL endpoint's URL. */
  listen(port: number, host: string): Promise<string>;
  /** Whether close() has begun; readiness answers 503 from that moment. */
  isDraining(): boolean;
  /** Drains: readiness 503, no new connections, in-flight requests finish, WebSockets close 1001. */
  close(): Promise<void>;
}

/** One HTTP server for every route: GraphQL (HTTP and WebSocket), webhook, health, metrics. */
export async function createHttpServer(
  services: Services,
  schema: GraphQLSchema,
  options: { subscriptions?: SubscriptionServerOptions } = {},
): Promise<HttpServer> {
  let draining = false;
  // A keep-alive connection busy when the drain began would otherwise stay open after its last
  // response until the client drops it or the deadline cuts it: close it as soon as it is idle.
  const afterResponse = () => {
    if (draining) setImmediate(() => fastify.server.closeIdleConnections());
  };
  // The webhook is answered by node:http before Fastify routes anything (collection/webhook-route.ts
  // says why); every other request goes to Fastify.
  const webhook = createWebhookRoute({
    credentials: services.config.webhook,
    allowedSources: services.config.webhookAllowedSources,
    timezone: services.config.upstream.timezone,
    store: services.store,
    notificationLog: services.notificationLog,
    metrics: services.metrics,
    logger: services.logger,
    clientAddress: clientAddressResolver(services.config.trustProxy),
    isDraining: () => draining,
    onResponse: afterResponse,
  });
  const fastify = Fastify({
    serverFactory: (handler) => createServer((request, response) => webhook(request, response) || handler(request, response)),
    // Our pino is a newer major than Fastify's typings name; the logger interface is the same.
    loggerInstance: services.logger as FastifyBaseLogger,
    // One line per webhook delivery is logged by the route; per-request access logs would drown it.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    // request.ip: the socket's address, or X-Forwarded-For through the proxies TRUST_PROXY names.
    trustProxy: fastifyTrustProxy(services.config.trustProxy),
  });
  // Callback style (not async) on every request's path: no promise per response.
  fastify.addHook('onResponse', (_request, _reply, done) => {
    afterResponse();
    done();
  });

  registerMetricsRoute(fastify, services.metrics);
  registerHealthRoutes(fastify, { store: services.store, pubsub: services.pubsub, metrics: services.metrics, isDraining: () => draining });
  // One set of document limits and bank-call prices for HTTP and WebSocket alike.
  const limits = createOperationLimits(schema, services.config.maxOperationCost, services.logger);
  const apollo = await registerGraphQL(fastify, schema, services, limits);
  const subscriptions = attachSubscriptionServer(fastify.server, schema, services, limits, options.subscriptions);

  return {
    fastify,
    async listen(port, host) {
      await fastify.listen({ port, host });
      const address = fastify.server.address() as AddressInfo;
      const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
      return `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${address.port}${GRAPHQL_PATH}`;
    },
    isDraining: () => draining,
    async close() {
      if (draining) return;
      draining = true;
      const deadline = setTimeout(() => fastify.server.closeAllConnections(), DRAIN_DEADLINE_MS);
      try {
        await Promise.all([subscriptions.dispose(), fastify.close()]);
      } finally {
        clearTimeout(deadline);
      }
      await apollo.stop();
    },
  };
}
