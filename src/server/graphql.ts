import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginLandingPageLocalDefault,
  ApolloServerPluginLandingPageProductionDefault,
} from '@apollo/server/plugin/landingPage/default';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import cors from '@fastify/cors';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { CorsOrigins } from '../config/network.ts';
import { createContext, type Context, type Services } from '../context.ts';
import { isAuthenticated } from '../auth/caller.ts';
import type { Secret } from '../secret.ts';
import { createCallbackSubscriptionLimits } from '../limits/callback-subscriptions.ts';
import type { OperationLimits } from '../limits/operation-limits.ts';
import { graphqlOperationSpanPlugin, markCallerAuthenticated, traceGraphQLHandler } from '../telemetry/graphql.ts';
import type { CallbackUrls } from '../callback-urls.ts';
import { cacheHintPlugins } from './cache-hints.ts';
import { formatError } from './format-error.ts';
import { operationLimitsPlugin } from './operation-limit-hooks.ts';
import { responseCachePlugins } from './response-cache.ts';
import { subscriptionCallbackPlugin } from './subscription-callback.ts';
import { ROUTER_SECRET_HEADER, routerSecretAccepted, routerSecretRequiredBody } from './router-secret.ts';

export const GRAPHQL_PATH = '/graphql';

/** What `/graphql` takes from the configuration. */
export interface GraphQLSettings {
  /**
   * Introspection and the Apollo Sandbox landing page: on under the sandbox rules only, as one policy
   * for HTTP and graphql-ws (the validation rule is among the operation limits both use).
   */
  introspection: boolean;
  /** `ROUTER_SECRET`: when set, only requests carrying it are served. */
  routerSecret: Secret | undefined;
  corsOrigins: CorsOrigins;
  /** `BANK_LIST_TTL_S`: the max-age of the public cache hints. */
  publicMaxAgeS: number;
  /** `SUBSCRIPTION_CALLBACK_URLS`: where the callback protocol may call back. */
  callbackUrls: CallbackUrls;
}

/**
 * Serves GraphQL over HTTP at /graphql (queries, mutations, and subscriptions over Apollo Router's
 * HTTP callback protocol) and returns the started ApolloServer, to be stopped after the HTTP server.
 */
export async function registerGraphQL(
  app: FastifyInstance,
  { schema, services, settings, limits }: { schema: GraphQLSchema; services: Services; settings: GraphQLSettings; limits: OperationLimits },
): Promise<ApolloServer<Context>> {
  const { logger } = services;
  const apollo = new ApolloServer<Context>({
    schema,
    logger,
    // Never a stack in a response, in production or not (the contract).
    includeStacktraceInErrorResponses: false,
    // Left on here: the policy is one validation rule among the limits (limits/operation-limits.ts),
    // shared with graphql-ws, which Apollo's own switch would not reach.
    introspection: true,
    // main.ts owns SIGTERM and drains in the contract's order; Apollo's own handler would re-raise it.
    stopOnTerminationSignals: false,
    formatError: (formatted, error) => formatError(formatted, error, logger),
    // Hostile documents stop at parse (tokens) or validation (aliases, depth, directives). Batched
    // requests stay refused (Apollo's default), so one HTTP request is one operation and one budget.
    parseOptions: limits.parseOptions,
    validationRules: limits.validationRules,
    allowBatchedHttpRequests: false,
    plugins: [
      settings.introspection
        ? ApolloServerPluginLandingPageLocalDefault({ footer: false })
        : ApolloServerPluginLandingPageProductionDefault({ footer: false }),
      subscriptionCallbackPlugin({
        logger,
        callbackUrls: settings.callbackUrls,
        onUrlRefused: () => services.metrics.authorizationRefusals.inc({ reason: 'callback_url_refused' }),
        limits,
        places: createCallbackSubscriptionLimits((held) => services.metrics.callbackSubscriptions.set(held)),
      }),
      operationMetricsPlugin(services),
      graphqlOperationSpanPlugin(),
      ...cacheHintPlugins<Context>(settings.publicMaxAgeS),
      operationLimitsPlugin(limits),
      ...responseCachePlugins<Context>({ schema, catalogueMaxAgeS: settings.publicMaxAgeS, metrics: services.metrics }),
    ],
  });
  await apollo.start();

  await app.register(async (scope) => {
    // Browsers on another origin (Apollo Studio's Explorer, a local web app) may call /graphql when
    // CORS_ORIGINS allows them: any origin under the sandbox rules, none elsewhere unless listed,
    // since a page an employee opens must not read personal data through their browser. Scoped to
    // /graphql: the webhook, health and metrics serve the bank and operators, never a browser page.
    const origin = settings.corsOrigins === 'any' ? true : [...settings.corsOrigins];
    const options = { origin, methods: ['GET', 'POST', 'OPTIONS'], maxAge: 600 };
    // The plugin answers preflights through an OPTIONS route on every path (Fastify's routes are not
    // scoped, only its hooks): a request on any other path gets no CORS header and a 404.
    const elsewhere = { origin: false };
    await scope.register(cors, {
      delegator: (request, callback) => callback(null, request.url.split('?', 1)[0] === GRAPHQL_PATH ? options : elsewhere),
    });
    scope.route({
      url: GRAPHQL_PATH,
      // OPTIONS (CORS preflight) is answered by @fastify/cors.
      method: ['GET', 'POST'],
      // Only with a ROUTER_SECRET: without one, every request may pass and the hook would be waste.
      ...(settings.routerSecret === undefined
        ? {}
        : {
            onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
              if (!routerSecretAccepted(settings.routerSecret, request.headers[ROUTER_SECRET_HEADER])) {
                return reply.code(401).send(routerSecretRequiredBody);
              }
            },
          }),
      handler: traceGraphQLHandler(fastifyApolloHandler(apollo, { context: (request) => httpContext(services, request) })),
      errorHandler: graphqlShapedError(services.logger),
    });
  });
  return apollo;
}

/**
 * What Fastify refuses before Apollo sees the request (a body that is not JSON, an empty one, one
 * over the limit), answered in GraphQL's shape with Apollo's code for a malformed request, as
 * Apollo answers its own; anything else is a bare INTERNAL_SERVER_ERROR, logged here.
 */
function graphqlShapedError(logger: Services['logger']) {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void => {
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      void reply.code(status).send({ errors: [{ message: error.message, extensions: { code: 'BAD_REQUEST' } }] });
      return;
    }
    logger.error({ err: error }, 'the GraphQL route failed outside an operation');
    void reply.code(500).send({ errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
  };
}

/**
 * An HTTP operation's context: its caller from the Authorization header. Its streams (the callback
 * protocol's) end themselves when the token ends: no connection of the client's would.
 */
async function httpContext(services: Services, request: FastifyRequest): Promise<Context> {
  const caller = await services.authenticator.callerOf(request.headers.authorization);
  markCallerAuthenticated(isAuthenticated(caller));
  return createContext(services, { caller, streamsEndWithToken: true });
}

/** Counts operations by type and outcome: `ok`, or the first error's code. */
function operationMetricsPlugin({ metrics }: Pick<Services, 'metrics'>): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ operation, response }) {
          const body = response.body;
          const errors = body.kind === 'single' ? body.singleResult.errors : body.initialResult.errors;
          const code = errors?.[0]?.extensions?.code;
          metrics.graphqlOperations.inc({
            operation_type: operation?.operation ?? 'unknown',
            outcome: errors?.length ? (typeof code === 'string' ? code : 'UNKNOWN') : 'ok',
          });
        },
      };
    },
  };
}
