// Subscriptions over Apollo Router's HTTP callback protocol: Apollo's own plugin, given only the
// subscriptions that may run, so nothing is sent on a caller's behalf before it is authorized.
import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import { ApolloServerPluginSubscriptionCallback } from '@apollo/server/plugin/subscriptionCallback';
import { createSourceEventStream, type GraphQLError, type GraphQLFormattedError } from 'graphql';
import { allowedCallbackUrl, type CallbackUrls } from '../callback-urls.ts';
import type { Context } from '../context.ts';
import { badUserInput, callbackUrlRefused } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { traceCallbackMessage } from '../telemetry/graphql.ts';
import { formatError } from './format-error.ts';

/** The shortest heartbeat a caller may ask for: a caller's choice must not make us a request cannon. */
export const MIN_HEARTBEAT_INTERVAL_MS = 1_000;

/**
 * Apollo's callback plugin behind three gates, each passed before its `check` request goes out:
 * the callback URL (SUBSCRIPTION_CALLBACK_URLS), the heartbeat interval (`0`, none, or at least
 * MIN_HEARTBEAT_INTERVAL_MS), and the subscription's own checks (token, scopes, accounts, arguments:
 * its guarded `subscribe`, run once dry). The plugin then checks, subscribes and sends as usual;
 * a redirect from the callback URL is never followed.
 */
export function subscriptionCallbackPlugin(options: { logger: Logger; callbackUrls: CallbackUrls; onUrlRefused: () => void }): ApolloServerPlugin<Context> {
  const plugin = ApolloServerPluginSubscriptionCallback({ logger: options.logger, fetcher: callbackFetcher(options.logger) });
  return {
    ...plugin,
    async requestDidStart(requestContext) {
      const subscription = requestContext.request.extensions?.subscription as Record<string, unknown> | undefined;
      if (subscription === undefined) return undefined;
      const refused = refuseExtension(subscription, options);
      if (refused !== undefined) return { didResolveOperation: () => Promise.reject(refused) };
      const callback = await plugin.requestDidStart!(requestContext);
      // Reached only once every plugin's didResolveOperation passed (the cost estimate among them):
      // until then the plugin's willSendResponse, which sends `check`, must not run.
      let starting = false;
      return {
        async didResolveOperation(resolved) {
          const refusal = await dryRun(resolved);
          if (refusal === undefined) return;
          // A refusal of the operation, answered like one of a field: the request itself was well formed.
          resolved.response.http.status = 200;
          throw refusal;
        },
        responseForOperation(resolved) {
          starting = true;
          return callback!.responseForOperation!(resolved);
        },
        async willSendResponse(sent) {
          if (starting) await callback!.willSendResponse!(sent);
        },
      };
    },
  };
}

/** Why the callback extension is refused (its URL, its heartbeat), or undefined; the URL normalised in place. */
function refuseExtension(subscription: Record<string, unknown>, options: { callbackUrls: CallbackUrls; onUrlRefused: () => void }): GraphQLError | undefined {
  const url = allowedCallbackUrl(options.callbackUrls, subscription.callbackUrl || subscription.callback_url);
  if (url === undefined) {
    options.onUrlRefused();
    return callbackUrlRefused(options.callbackUrls);
  }
  // The plugin calls exactly the URL that was checked, as the parser normalised it.
  subscription.callbackUrl = url.href;
  delete subscription.callback_url;
  const heartbeat = subscription.heartbeatIntervalMs ?? subscription.heartbeat_interval_ms;
  if (heartbeat !== undefined && heartbeat !== 0 && !(Number.isSafeInteger(heartbeat) && (heartbeat as number) >= MIN_HEARTBEAT_INTERVAL_MS)) {
    const refusal = badUserInput('heartbeatIntervalMs', `must be 0 (no heartbeats) or a whole number of at least ${MIN_HEARTBEAT_INTERVAL_MS} milliseconds.`);
    refusal.extensions.http = { status: 400 };
    return refusal;
  }
  return undefined;
}

/**
 * The subscription's source stream made and ended at once (nothing is read until it is iterated):
 * what its guarded `subscribe` refuses, it refuses here, before any request goes out.
 */
async function dryRun(request: GraphQLRequestContext<Context>): Promise<GraphQLError | undefined> {
  const source = await createSourceEventStream({
    schema: request.schema,
    document: request.document!,
    contextValue: request.contextValue,
    variableValues: request.request.variables,
    operationName: request.operationName,
  });
  if (Symbol.asyncIterator in source) {
    await source[Symbol.asyncIterator]().return?.();
    return undefined;
  }
  return source.errors?.[0];
}

type CallbackFetcher = NonNullable<NonNullable<Parameters<typeof ApolloServerPluginSubscriptionCallback>[0]>['fetcher']>;

/**
 * The plugin's requests: never following a redirect (a 3xx ends the subscription as any refusal
 * does), and with `next` and `complete` errors masked as every other response is on its way out
 * (the plugin posts graphql-js's errors unformatted).
 */
function callbackFetcher(logger: Logger): CallbackFetcher {
  return async (url, init) => {
    // The plugin always sends a JSON string.
    const body = formatCallbackErrors(String(init?.body ?? '{}'), logger);
    return traceCallbackMessage(body, () => fetch(url, { ...init, body, redirect: 'manual' }));
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
