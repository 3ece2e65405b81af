// Subscriptions over Apollo Router's HTTP callback protocol: Apollo's own plugin, given only the
// subscriptions that may run, so nothing is sent on a caller's behalf before it is authorized.
import type {
  ApolloServerPlugin,
  GraphQLRequestContext,
  GraphQLRequestContextDidResolveOperation,
  GraphQLRequestContextWillSendResponse,
} from '@apollo/server';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import { ApolloServerPluginSubscriptionCallback } from '@apollo/server/plugin/subscriptionCallback';
import { createSourceEventStream, GraphQLError, type GraphQLFormattedError } from 'graphql';
import { withinDeadline } from '../async/deadline.ts';
import { allowedCallbackUrl, type CallbackUrls } from '../callback-urls.ts';
import type { Context } from '../context.ts';
import { badUserInput, callbackUrlRefused } from '../errors.ts';
import type { CallbackPlace, CallbackSubscriptionLimits } from '../limits/callback-subscriptions.ts';
import type { OperationLimits } from '../limits/operation-limits.ts';
import type { Logger } from '../logger.ts';
import { traceCallbackMessage } from '../telemetry/graphql.ts';
import { formatError } from './format-error.ts';
import { refuseHttpOperation } from './operation-limit-hooks.ts';

/** The shortest heartbeat a caller may ask for: a caller's choice must not make us a request cannon. */
export const MIN_HEARTBEAT_INTERVAL_MS = 1_000;

/**
 * The longest one callback request (check, next, heartbeat, complete) may take, and the time after
 * which a failed one is not tried again: a router that hangs holds neither the subscription request
 * nor a stream for longer.
 */
export const CALLBACK_TIMEOUT_MS = 10_000;

/**
 * How long the server's stop waits for the routers to take `complete` for the callback
 * subscriptions it ends. A router that takes longer is left to notice by the heartbeats that stop:
 * the process must still exit within its shutdown budget.
 */
export const CALLBACK_DRAIN_MS = 2_000;

export interface SubscriptionCallbackOptions {
  logger: Logger;
  callbackUrls: CallbackUrls;
  onUrlRefused: () => void;
  /** The operation limits, checked first (HTTP's plugin leaves callback requests to this one). */
  limits: OperationLimits;
  /** How many callback subscriptions a caller, and the replica, may hold. */
  places: CallbackSubscriptionLimits;
}

/**
 * Apollo's callback plugin behind its gates, each passed before its `check` request goes out: the
 * extension itself (an object, on a subscription), the callback URL (SUBSCRIPTION_CALLBACK_URLS), the
 * heartbeat interval (`0`, none, or at least MIN_HEARTBEAT_INTERVAL_MS), then, in this order, the
 * operation limits (cost), the subscription's own checks (token, scopes, accounts, arguments: its
 * guarded `subscribe`, run once dry), and a place among the callback subscriptions. Apollo runs
 * every plugin's didResolveOperation at once, so all three run in this plugin's, one after another.
 * The plugin then checks, subscribes and sends as usual, every request with a time-out; a redirect
 * from the callback URL is never followed, and answers the subscription request with HTTP 400.
 */
export function subscriptionCallbackPlugin(options: SubscriptionCallbackOptions): ApolloServerPlugin<Context> {
  // The subscriptions whose first check is on its way, by callback URL and id: how it failed, if it did.
  const checking = new Map<string, CheckOutcome>();
  const plugin = ApolloServerPluginSubscriptionCallback({
    logger: routerFailuresAsWarnings(options.logger),
    fetcher: callbackFetcher(options.logger, checking),
    // A message is not tried again once its time-out has passed since its first try.
    retry: { maxRetryTime: CALLBACK_TIMEOUT_MS },
  });
  return {
    ...plugin,
    async serverWillStart(service) {
      const listener = await plugin.serverWillStart!(service);
      const drain = listener?.drainServer;
      if (drain === undefined) return listener;
      return {
        ...listener,
        async drainServer() {
          const done = await withinDeadline(
            drain().then(() => true),
            CALLBACK_DRAIN_MS,
            false,
          );
          if (!done)
            options.logger.warn(
              { waitedMs: CALLBACK_DRAIN_MS },
              'a router did not take `complete` for its callback subscriptions in time; it sees their end when their heartbeats stop',
            );
        },
      };
    },
    async requestDidStart(requestContext) {
      const subscription: unknown = requestContext.request.extensions?.subscription;
      if (subscription === undefined) return undefined;
      const refused = refuseExtension(subscription, options);
      if (refused !== undefined) return { didResolveOperation: () => Promise.reject(refused) };
      const callback = await plugin.requestDidStart!(requestContext);
      const extension = subscription as Record<string, unknown>;
      const key = checkKey(extension.callbackUrl, extension.subscriptionId || extension.subscription_id);
      let place: CallbackPlace | undefined;
      // Reached only once every plugin's didResolveOperation passed: until then the plugin's
      // willSendResponse, which sends `check`, must not run.
      let starting = false;
      return {
        async didResolveOperation(resolved) {
          place = await admit(resolved, options);
        },
        responseForOperation(resolved) {
          starting = true;
          return callback!.responseForOperation!(resolved);
        },
        async willSendResponse(sent) {
          if (!starting) return place?.release();
          const check: CheckOutcome = {};
          checking.set(key, check);
          try {
            await callback!.willSendResponse!(held(sent, place!));
          } finally {
            if (checking.get(key) === check) checking.delete(key);
            // Never subscribed (its check failed, or it refused itself): nothing holds the place.
            if (!place!.holding) place!.release();
          }
          if (check.failure !== undefined) answerCheckFailed(sent, check.failure);
        },
      };
    },
  };
}

/**
 * Why the callback extension is refused (not an object, its URL, its heartbeat), or undefined; the
 * URL normalised in place.
 */
function refuseExtension(
  subscription: unknown,
  options: { callbackUrls: CallbackUrls; onUrlRefused: () => void },
): GraphQLError | undefined {
  if (typeof subscription !== 'object' || subscription === null || Array.isArray(subscription)) {
    return withStatus(
      badUserInput(
        'extensions.subscription',
        'must be an object ({ callbackUrl, subscriptionId, verifier, heartbeatIntervalMs }), as Apollo Router sends it.',
      ),
      400,
    );
  }
  const extension = subscription as Record<string, unknown>;
  const url = allowedCallbackUrl(options.callbackUrls, extension.callbackUrl || extension.callback_url);
  if (url === undefined) {
    options.onUrlRefused();
    return callbackUrlRefused(options.callbackUrls);
  }
  // The plugin calls exactly the URL that was checked, as the parser normalised it.
  extension.callbackUrl = url.href;
  delete extension.callback_url;
  const heartbeat = extension.heartbeatIntervalMs ?? extension.heartbeat_interval_ms;
  if (
    heartbeat !== undefined &&
    heartbeat !== 0 &&
    !(Number.isSafeInteger(heartbeat) && (heartbeat as number) >= MIN_HEARTBEAT_INTERVAL_MS)
  ) {
    return withStatus(
      badUserInput(
        'heartbeatIntervalMs',
        `must be 0 (no heartbeats) or a whole number of at least ${MIN_HEARTBEAT_INTERVAL_MS} milliseconds.`,
      ),
      400,
    );
  }
  return undefined;
}

/**
 * The gates a resolved callback request passes in order, before any request goes out: a
 * subscription, the operation limits, the dry run, a place. Throws the first refusal.
 */
async function admit(
  resolved: GraphQLRequestContextDidResolveOperation<Context>,
  options: SubscriptionCallbackOptions,
): Promise<CallbackPlace> {
  const type = resolved.operation?.operation;
  if (type !== undefined && type !== 'subscription') {
    resolved.response.http.status = 400;
    throw new GraphQLError(
      `extensions.subscription asks for the callback protocol, which serves subscriptions only; this operation is a ${type}.`,
      {
        extensions: { code: ApolloServerErrorCode.BAD_REQUEST },
      },
    );
  }
  const tooDear = refuseHttpOperation(options.limits, resolved);
  if (tooDear !== undefined) throw tooDear;
  const refusal = await dryRun(resolved);
  if (refusal !== undefined) {
    // A refusal of the operation, answered like one of a field: the request itself was well formed.
    resolved.response.http.status = 200;
    throw refusal;
  }
  const place = options.places.admit(resolved.contextValue.caller);
  if (place instanceof GraphQLError) {
    resolved.response.http.status = 429;
    options.logger.warn({ reason: place.message }, 'callback subscription refused: too many held');
    throw place;
  }
  return place;
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

/**
 * The request as the plugin subscribes with it: the streams its context opens hold `place` until
 * they end, whichever way (completed, the token ended, the router gone, the server draining).
 */
function held(sent: GraphQLRequestContextWillSendResponse<Context>, place: CallbackPlace): GraphQLRequestContextWillSendResponse<Context> {
  const context = sent.contextValue;
  return { ...sent, contextValue: { ...context, incomingTransfers: (options) => place.hold(context.incomingTransfers(options)) } };
}

/** How a subscription's first `check` failed, when it did: what its callback URL answered, or that it did not. */
interface CheckOutcome {
  failure?: string;
}

/**
 * The subscription request's answer when its callback URL did not accept `check`: a 400 that says
 * how (a redirect, another status, no answer), never the plugin's bare 500. Nothing else was sent.
 */
function answerCheckFailed({ response }: GraphQLRequestContextWillSendResponse<Context>, failure: string): void {
  if (response.body.kind !== 'single') return;
  response.http.status = 400;
  response.body.singleResult.errors = [
    {
      message: `callbackUrl: ${failure}; the subscription was not started and nothing else was sent.`,
      extensions: { code: ApolloServerErrorCode.BAD_USER_INPUT, argumentName: 'callbackUrl' },
    },
  ];
}

function checkKey(url: unknown, id: unknown): string {
  return JSON.stringify([url, id]);
}

function withStatus(error: GraphQLError, status: number): GraphQLError {
  error.extensions.http = { status };
  return error;
}

/**
 * The plugin's log lines at most at warn: its failures are the router's (a check refused, a
 * callback URL that hangs or redirects), answered to the router itself. Our own faults in a
 * stream are logged, at error, where their messages are masked (callbackFetcher).
 */
function routerFailuresAsWarnings(logger: Logger) {
  return {
    debug: (message: string) => logger.debug(message),
    info: (message: string) => logger.info(message),
    warn: (message: string) => logger.warn(message),
    error: (message: string) => logger.warn(message),
  };
}

type CallbackFetcher = NonNullable<NonNullable<Parameters<typeof ApolloServerPluginSubscriptionCallback>[0]>['fetcher']>;

/**
 * The plugin's requests: each cut at CALLBACK_TIMEOUT_MS, never following a redirect (a 3xx ends the
 * subscription as any refusal does), and with `next` and `complete` errors masked as every other
 * response is on its way out (the plugin posts graphql-js's errors unformatted). How a subscription's
 * first `check` fails is noted in `checking`, for its answer.
 */
function callbackFetcher(logger: Logger, checking: ReadonlyMap<string, CheckOutcome>): CallbackFetcher {
  return async (url, init) => {
    // The plugin always sends a JSON string.
    const message = JSON.parse(String(init?.body ?? '{}')) as CallbackMessage;
    const body = formatCallbackErrors(message, logger);
    const check = message.action === 'check' ? checking.get(checkKey(url, message.id)) : undefined;
    // What a retried check met before is not how it ended.
    if (check !== undefined) delete check.failure;
    let response: Response;
    try {
      response = await traceCallbackMessage(body, () =>
        fetch(url, { ...init, body, redirect: 'manual', signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS) }),
      );
    } catch (error) {
      if (check !== undefined) {
        const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
        check.failure = timedOut ? `it did not answer the check within ${CALLBACK_TIMEOUT_MS / 1000} s` : 'it could not be reached';
      }
      throw error;
    }
    if (check === undefined || response.ok) return response;
    check.failure =
      response.status >= 300 && response.status < 400
        ? 'it answered the check with a redirect, which is never followed; give the callback URL itself'
        : `it answered the check with HTTP ${response.status}`;
    // The plugin goes on to subscribe after a 404 to `check` (it reads 404 as the end of a running
    // subscription); any other refusal stops it, as the callback protocol wants of a failed check.
    return response.status === 404 ? new Response(null, { status: 400 }) : response;
  };
}

interface CallbackMessage {
  action?: string;
  id?: unknown;
  errors?: unknown;
  payload?: { errors?: unknown };
}

function formatCallbackErrors(message: CallbackMessage, logger: Logger): string {
  const format = (errors: unknown) =>
    Array.isArray(errors) ? errors.map((error: GraphQLFormattedError) => formatError(error, error, logger)) : errors;
  if (message.errors !== undefined) message.errors = format(message.errors);
  if (message.payload?.errors !== undefined) message.payload.errors = format(message.payload.errors);
  return JSON.stringify(message);
}
