import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { WebhookCredentials } from '../collection/signature.ts';
import type { TrustProxy } from '../config/network.ts';
import { createWebhookRoute } from '../collection/webhook-route.ts';
import type { Services } from '../context.ts';
import type { IpRange } from '../ip-ranges.ts';
import { createOperationLimits } from '../limits/operation-limits.ts';
import { rawBodiesPerUnit } from '../limits/store-reads.ts';
import { GRAPHQL_PATH, registerGraphQL, type GraphQLSettings } from './graphql.ts';
import { registerHealthRoutes } from './health.ts';
import { createHttpEdge, type HttpEdge } from './http-edge.ts';
import { registerMetricsRoute } from './metrics-route.ts';
import { registerSandboxBankRoute, type SandboxBankSettings } from './sandbox-bank.ts';
import { attachSubscriptionServer } from './websocket.ts';

export interface HttpServer {
  /** Starts listening (and on the webhook's own port, when it has one); resolves to where. */
  listen(port: number, host: string): Promise<{ graphqlUrl: string; webhookUrl: string | undefined }>;
  /**
   * Drains: readiness 503, no new connections, in-flight requests finish, WebSockets close 1001.
   * Rejects when the drain ran out of time and cut connections still open.
   */
  close(): Promise<void>;
}

/** What the server takes from the configuration. */
export interface HttpSettings extends GraphQLSettings {
  /** `TRUST_PROXY`. */
  trustProxy: TrustProxy;
  webhook: {
    credentials: WebhookCredentials;
    /** `WEBHOOK_ALLOWED_IPS`; `undefined` accepts any source. */
    allowedSources: readonly IpRange[] | undefined;
    /** `BANK_TIMEZONE`, for `tranDateTime`. */
    timezone: string;
    /** `WEBHOOK_MAX_BODY_BYTES`: the largest body read (413 above it). */
    maxBodyBytes: number;
  };
  /**
   * `WEBHOOK_PORT`: when set, the webhook and health are served there and not on PORT, so the
   * ingress the bank reaches never reaches `/graphql` or `/metrics`.
   */
  webhookPort: number | undefined;
  /** `SUBSCRIPTION_KEEPALIVE_MS`: how often each WebSocket is pinged. */
  subscriptionKeepAliveMs: number;
  /** The in-process sandbox bank, only while it runs under the sandbox rules (sandbox-bank.ts). */
  sandboxBank?: SandboxBankSettings | undefined;
}

/**
 * The HTTP servers, all on one edge (timeouts, drain, client address, timing): GraphQL (HTTP and
 * WebSocket) and metrics on PORT; the webhook and health there too, or on WEBHOOK_PORT when set.
 */
export async function createHttpServer(services: Services, schema: GraphQLSchema, settings: HttpSettings): Promise<HttpServer> {
  const edge = createHttpEdge({ metrics: services.metrics, trustProxy: settings.trustProxy });
  // The webhook is answered on the edge before Fastify routes anything (collection/webhook-route.ts
  // says why); every other request goes to Fastify.
  const webhook = createWebhookRoute({
    ...settings.webhook,
    store: services.store,
    notificationFeed: services.notificationFeed,
    quarantine: services.quarantineKeeper,
    confirmer: services.confirmer,
    metrics: services.metrics,
    logger: services.logger,
    edge,
  });
  const ownPort = settings.webhookPort !== undefined;
  const fastify = createFastify(services, edge, (handler) =>
    edge.serve(ownPort ? handler : (request, response) => webhook(request, response) || handler(request, response)),
  );
  const webhookFastify = ownPort
    ? createFastify(services, edge, (handler) =>
        edge.serveOnOwnPort((request, response) => webhook(request, response) || handler(request, response)),
      )
    : undefined;

  registerMetricsRoute(fastify, services.metrics);
  for (const app of [fastify, webhookFastify]) if (app !== undefined) registerSandboxBankRoute(app, settings.sandboxBank);
  registerHealthRoutes(webhookFastify ?? fastify, {
    store: services.store,
    pubsub: services.pubsub,
    registry: services.metrics.registry,
    isDraining: edge.isDraining,
  });
  // One set of document limits and bank-call prices for HTTP and WebSocket alike.
  const limits = createOperationLimits(schema, {
    maxCost: services.maxOperationCost,
    rawBodiesPerUnit: rawBodiesPerUnit(settings.webhook.maxBodyBytes),
    introspection: settings.introspection,
    logger: services.logger,
  });
  const apollo = await registerGraphQL(fastify, { schema, services, settings, limits });
  const subscriptions = attachSubscriptionServer(fastify.server, {
    schema,
    services,
    routerSecret: settings.routerSecret,
    limits,
    keepAliveMs: settings.subscriptionKeepAliveMs,
  });

  return {
    async listen(port, host) {
      const graphqlUrl = `${await listenOn(fastify, port, host)}${GRAPHQL_PATH}`;
      const webhookUrl = webhookFastify && (await listenOn(webhookFastify, settings.webhookPort!, host));
      return { graphqlUrl, webhookUrl };
    },
    async close() {
      if (edge.isDraining()) return;
      try {
        await edge.drain(() => Promise.all([subscriptions.dispose(), fastify.close(), webhookFastify?.close()]).then(() => undefined));
      } finally {
        // Even after a drain cut short: Apollo's own plugins still get their stop.
        await apollo.stop();
      }
    },
  };
}

/** A Fastify instance on a server of the edge (`serve` makes it), timed by the edge. */
function createFastify(services: Services, edge: HttpEdge, serve: (handler: RequestListener) => Server): FastifyInstance {
  const fastify = Fastify({
    serverFactory: serve,
    // Our pino is a newer major than Fastify's typings name; the logger interface is the same. The
    // assertion picks Fastify's logger type for the instance, which the linter cannot see.
    // oxlint-disable-next-line typescript/no-unnecessary-type-assertion
    loggerInstance: services.logger as FastifyBaseLogger,
    // One line per webhook delivery is logged by the route; per-request access logs would drown it.
    logController: new LogController({ disableRequestLogging: true }),
    // The edge answers 503 while draining, before any router sees the request.
    return503OnClosing: false,
    // request.ip: the socket's address, or X-Forwarded-For through the proxies TRUST_PROXY names.
    trustProxy: edge.trustProxy,
  });
  // Callback style (not async) on every request's path: no promise per response.
  fastify.addHook('onResponse', (request, reply, done) => {
    edge.responded(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', statusCode: reply.statusCode },
      reply.elapsedTime / 1000,
    );
    done();
  });
  return fastify;
}

/** Listens; resolves to the base URL (`http://host:port`), loopback written as a browser would reach it. */
async function listenOn(fastify: FastifyInstance, port: number, host: string): Promise<string> {
  await fastify.listen({ port, host });
  const address = fastify.server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${address.port}`;
}
