import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginLandingPageLocalDefault,
  ApolloServerPluginLandingPageProductionDefault,
} from '@apollo/server/plugin/landingPage/default';
import { ApolloServerPluginSubscriptionCallback } from '@apollo/server/plugin/subscriptionCallback';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLFormattedError, GraphQLSchema } from 'graphql';
import { createContext, type Context, type Services } from '../context.ts';
import { isAuthenticated } from '../auth/caller.ts';
import { callbackUrlRefused } from '../errors.ts';
import type { Secret } from '../secret.ts';
import type { OperationLimits } from '../limits/operation-limits.ts';
import type { Logger } from '../logger.ts';
import { graphqlOperationSpanPlugin, markCallerAuthenticated, traceCallbackMessage, traceGraphQLHandler } from '../telemetry/graphql.ts';
import { allowedCallbackUrl, type CallbackUrls } from './callback-urls.ts';
import { cacheHintPlugins } from './cache-hints.ts';
import { formatError } from './format-error.ts';
import { operationCostPlugin } from './operation-limit-hooks.ts';
import { ROUTER_SECRET_HEADER, routerSecretAccepted, routerSecretRequiredBody } from './router-secret.ts';

export const GRAPHQL_PATH = '/graphql';

/** Browser origins allowed to call `/graphql` cross-origin: every one, or exactly these (none when empty). */
export type CorsOrigins = 'any' | readonly string[];

/** What `/graphql` takes from the configuration. */
export interface GraphQLSettings {
  /** `NODE_ENV=production`: Apollo's production landing page. */
  production: boolean;
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
    // main.ts owns SIGTERM and drains in the contract's order; Apollo's own handler would re-raise it.
    stopOnTerminationSignals: false,
    formatError: (formatted, error) => formatError(formatted, error, logger),
    // Hostile documents stop at parse (tokens) or validation (aliases, depth, directives). Batched
    // requests stay refused (Apollo's default), so one HTTP request is one operation and one budget.
    parseOptions: limits.parseOptions,
    validationRules: limits.validationRules,
    allowBatchedHttpRequests: false,
    plugins: [
      settings.production
        ? ApolloServerPluginLandingPageProductionDefault({ footer: false })
        : ApolloServerPluginLandingPageLocalDefault({ footer: false }),
      allowedCallbacksOnly(
        ApolloServerPluginSubscriptionCallback({ logger, fetcher: formattingCallbackFetcher(logger) }),
        settings.callbackUrls,
        () => services.metrics.authorizationRefusals.inc({ reason: 'callback_url_refused' }),
      ),
      operationMetricsPlugin(services),
      graphqlOperationSpanPlugin(),
      ...cacheHintPlugins<Context>(settings.publicMaxAgeS),
      operationCostPlugin(limits),
    ],
  });
  await apollo.start();

  await app.register(async (scope) => {
    // Browsers on another origin (Apollo Studio's Explorer, a local web app) may call /graphql when
    // CORS_ORIGINS allows them: any origin outside production, none in production unless listed,
    // since a page an employee opens must not read personal data through their browser. Scoped to
    // /graphql: the webhook, health and metrics serve the bank and operators, never a browser page.
    const origin = settings.corsOrigins === 'any' ? true : [...settings.corsOrigins];
    await scope.register(cors, { origin, methods: ['GET', 'POST', 'OPTIONS'], maxAge: 600 });
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
    });
  });
  return apollo;
}

/**
 * An HTTP operation's context: its caller from the Authorization header. Its streams (the callback
 * protocol's) end themselves when the token expires: no connection of the client's would.
 */
async function httpContext(services: Services, request: FastifyRequest): Promise<Context> {
  const caller = await services.authenticator.callerOf(request.headers.authorization);
  markCallerAuthenticated(isAuthenticated(caller));
  return createContext(services, { caller, streamsEndWithToken: true });
}

/**
 * Apollo's callback plugin, given only subscription requests whose callback URL is allowed: any
 * other is refused before the plugin sees it, so not even its `check` request is sent.
 */
function allowedCallbacksOnly(plugin: ApolloServerPlugin<Context>, allowed: CallbackUrls, onRefused: () => void): ApolloServerPlugin<Context> {
  return {
    ...plugin,
    async requestDidStart(requestContext) {
      const subscription = requestContext.request.extensions?.subscription as Record<string, unknown> | undefined;
      if (subscription === undefined) return plugin.requestDidStart?.(requestContext);
      const url = allowedCallbackUrl(allowed, subscription.callbackUrl || subscription.callback_url);
      if (url === undefined) {
        onRefused();
        return { didResolveOperation: async () => Promise.reject(callbackUrlRefused(allowed)) };
      }
      // The plugin calls exactly the URL that was checked, as the parser normalised it.
      subscription.callbackUrl = url.href;
      delete subscription.callback_url;
      return plugin.requestDidStart?.(requestContext);
    },
  };
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
            outcome: errors?.length ? String(code ?? 'UNKNOWN') : 'ok',
          });
        },
      };
    },
  };
}

type CallbackFetcher = NonNullable<NonNullable<Parameters<typeof ApolloServerPluginSubscriptionCallback>[0]>['fetcher']>;

/**
 * The callback plugin posts graphql-js's errors to the router unformatted (an error thrown by a
 * stream mid-way would carry its raw message); this gives `next` and `complete` the same masking
 * as every other response on their way out.
 */
function formattingCallbackFetcher(logger: Logger): CallbackFetcher {
  return async (url, init) => {
    if (typeof init?.body !== 'string') return fetch(url, init);
    const body = formatCallbackErrors(init.body, logger);
    return traceCallbackMessage(body, () => fetch(url, { ...init, body }));
  };
}

function formatCallbackErrors(body: string, logger: Logger): string {
  const message = JSON.parse(body) as { errors?: unknown; payload?: { errors?: unknown } };
  const format = (errors: unknown) =>
    Array.isArray(errors) ? errors.map((error: GraphQLFormattedError) => formatError(error, error, logger)) : errors;
  if (message.errors !== undefined) message.errors = format(message.errors);
  if (message.payload?.errors !== undefined) message.payload.errors = format(message.payload.errors);
  return JSON.stringify(message);
}
