import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import { execute, type GraphQLError, type GraphQLSchema } from 'graphql';
import type { Context, SubscribePayload } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import WebSocket, { WebSocketServer } from 'ws';
import { reportTooFarBehind } from '../collection/subscriber-queue.ts';
import { accessKey, sharedCaller, type Caller, type TokenLifetime } from '../auth/caller.ts';
import { TOKEN_END_PROBLEMS, whenTokenEnds, type TokenEnd } from '../auth/token-deadline.ts';
import { createContext, type Services } from '../context.ts';
import { badUserInput, unauthenticated } from '../errors.ts';
import type { OperationLimits } from '../limits/operation-limits.ts';
import type { Logger } from '../logger.ts';
import type { Secret } from '../secret.ts';
import { inOperationSpan } from '../telemetry/websocket.ts';
import { createSubscriptionFanout } from './fanout/index.ts';
import { openSocketConnection, type SocketConnection } from './fanout/socket-connection.ts';
import { formatWebSocketError } from './format-error.ts';
import { GRAPHQL_PATH } from './graphql.ts';
import { checkWebSocketOperation } from './operation-limit-hooks.ts';
import { ROUTER_SECRET_HEADER, routerSecretAccepted } from './router-secret.ts';
import { createResultPresenter, createWebSocketContext, webSocketOperation } from './websocket-context.ts';

/** `useServer`'s keep-alive interval that turns graphql-ws's own off (graphql-ws.contract.test.ts beside this file pins it). */
const GRAPHQL_WS_KEEP_ALIVE_OFF = 0;

/** What graphql-ws would send, were the socket still open, for an error that is the socket's own end. */
const CONNECTION_GONE = { message: 'The connection closed.', extensions: { code: ApolloServerErrorCode.INTERNAL_SERVER_ERROR } };

/** The most operations one connection may hold at once: one client cannot take a replica's subscriptions. */
export const MAX_OPERATIONS_PER_CONNECTION = 100;

/** The largest WebSocket message read; a larger one closes the socket with 1009 (ws's `maxPayload`). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * How a connection whose token ended is closed, by why it ended: the client reconnects with a fresh
 * token and resumes with `after`.
 */
export const TOKEN_ENDED_CLOSE = {
  expired: { code: 4401, reason: 'Token expired: reconnect with a fresh token, resume with after' },
  unknown_key: { code: 4401, reason: 'Token key withdrawn: reconnect with a fresh token, resume with after' },
} as const satisfies Record<TokenEnd, { code: number; reason: string }>;

/** What we keep in graphql-ws's per-connection `extra`, from the moment it acknowledges the connection. */
interface ConnectionExtra extends Record<PropertyKey, unknown> {
  connection: SocketConnection;
  /** Who opened the connection: its token, from the upgrade's Authorization header or connectionParams. */
  caller: Caller;
  /** Set once its token has ended (the socket is closing): an operation that still arrives runs nothing. */
  tokenEnded?: TokenEnd;
}

type ConnectionParams = Record<string, unknown> | undefined;
/** graphql-ws's per-connection context, as its hooks receive it here. */
type ConnectionContext = Context<ConnectionParams, Extra & Partial<ConnectionExtra>>;

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
  {
    schema,
    services,
    routerSecret,
    limits,
    keepAliveMs,
  }: {
    schema: GraphQLSchema;
    services: Services;
    routerSecret: Secret | undefined;
    limits: OperationLimits;
    /** How often each socket is pinged; unanswered by the next ping, it is ended. */
    keepAliveMs: number;
  },
): SubscriptionServer {
  // Upgrades are handed over here rather than through ws's `server` option, which also re-emits the
  // server's listen errors (a taken port) on the WebSocket server, where graphql-ws prints them with a
  // stack beside the start-up's own one-line error.
  const wss = new WebSocketServer({ noServer: true, path: GRAPHQL_PATH, maxPayload: MAX_MESSAGE_BYTES });
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) =>
    wss.handleUpgrade(request, socket, head, (client) => wss.emit('connection', client, request));
  server.on('upgrade', onUpgrade);
  const { logger, metrics } = services;
  const present = createResultPresenter(logger);
  const fanout = createSubscriptionFanout({
    metrics,
    present,
    onReturnError: (error) => logger.debug({ err: error }, 'ending a shared subscription source failed'),
    // Shared only by subscribers with the same grants (their access key), so it runs as any of them would.
    sharedContext: (caller) => createContext(services, { caller: sharedCaller(caller) }),
    accessKey,
  });
  const acknowledged = (extra: ConnectionContext['extra']): ConnectionExtra => {
    if (extra.connection === undefined || extra.caller === undefined)
      throw new Error('graphql-ws ran an operation on a connection it had not acknowledged');
    return extra as ConnectionExtra;
  };
  const disposable = useServer<ConnectionParams, ConnectionExtra>(
    {
      schema,
      onConnect: acceptConnection({ routerSecret, keepAliveMs, services }),
      onSubscribe: (ctx, _id, payload) => {
        // Messages the client sent before it read the 4401 still arrive while the socket closes.
        if (ctx.extra.tokenEnded !== undefined) return [unauthenticated(TOKEN_END_PROBLEMS[ctx.extra.tokenEnded])];
        // graphql-ws has already counted this operation among the connection's.
        if (Object.keys(ctx.subscriptions).length > MAX_OPERATIONS_PER_CONNECTION) return [tooManyOperations()];
        // The same document limits and bank-call estimate as over HTTP: Apollo's plugins never see these.
        return checkWebSocketOperation(schema, limits, payload);
      },
      // Each operation's spans are children of the upgrade request's traceparent (the router's).
      context: ({ extra }, id, request, args) => {
        const { connection, caller } = acknowledged(extra);
        return createWebSocketContext(services, { connection, caller, id, request, upgradeHeaders: extra.request.headers, args });
      },
      execute: (args) => inOperationSpan(webSocketOperation(args).trace, () => execute(args)),
      subscribe: (args) => inOperationSpan(webSocketOperation(args).trace, () => fanout.subscribe(args)),
      // Results graphql-ws sends itself (operations that run alone); shared executions present theirs alike.
      onNext: (_ctx, _id, _payload, args, result) => present(webSocketOperation(args).trace, result),
      // Validation errors, and errors thrown by a stream mid-way, which graphql-ws would send raw.
      onError: errorsForClient(logger),
    },
    wss,
    GRAPHQL_WS_KEEP_ALIVE_OFF,
  );
  return {
    dispose: async () => {
      server.off('upgrade', onUpgrade);
      await disposable.dispose();
    },
  };
}

/** The error of an operation beyond MAX_OPERATIONS_PER_CONNECTION on one connection. */
function tooManyOperations() {
  return badUserInput(
    'subscription',
    `this connection already holds ${MAX_OPERATIONS_PER_CONNECTION} operations, the most one connection may: complete one, or open another connection`,
  );
}

/**
 * graphql-ws's `onConnect`: refuses a connection without the router secret (when one is set; graphql-ws
 * then closes it with 4403 Forbidden), and gives an accepted one its caller (from the upgrade's
 * Authorization header, else connectionParams.Authorization), its SocketConnection, kept in `extra`,
 * and its keep-alive. A connection whose token verified is closed with 4401 when the token ends:
 * it expires, or its key leaves the issuer's JWKS. One without a valid token is still accepted:
 * what needs a token is refused field by field.
 */
function acceptConnection(deps: { routerSecret: Secret | undefined; keepAliveMs: number; services: Services }) {
  const { logger, metrics, authenticator } = deps.services;
  return async ({ extra, connectionParams, subscriptions }: ConnectionContext): Promise<boolean> => {
    const provided =
      extra.request.headers[ROUTER_SECRET_HEADER] ?? connectionParams?.['Router-Secret'] ?? connectionParams?.[ROUTER_SECRET_HEADER];
    if (!routerSecretAccepted(deps.routerSecret, provided)) return false;
    extra.caller = await authenticator.callerOf(
      extra.request.headers.authorization ?? connectionParams?.Authorization ?? connectionParams?.authorization,
    );
    if (extra.caller.kind === 'verified') {
      closeWhenTokenEnds(extra.socket, extra.caller.lifetime, (why) => {
        extra.tokenEnded = why;
        metrics.authorizationRefusals.inc({ reason: why });
      });
    }
    // An operation's stream that falls too far behind closes the socket it writes to with 1013.
    extra.connection = openSocketConnection(extra.socket, {
      gauge: metrics.notificationsWaiting,
      onTooFarBehind: (details) => reportTooFarBehind({ logger, metrics }, details),
    });
    keepAlive(extra.socket, deps.keepAliveMs, extra.connection, () => Object.keys(subscriptions).length > 0);
    return true;
  };
}

/** Closes `socket` with 4401 when the token of `lifetime` ends, unless it has closed by then. */
function closeWhenTokenEnds(socket: WebSocket, lifetime: TokenLifetime, onEnded: (why: TokenEnd) => void): void {
  // Gone while its token was checked: its 'close' has been and would never cancel the watch.
  if (socket.readyState !== WebSocket.OPEN) return;
  const cancel = whenTokenEnds(lifetime, (why) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    onEnded(why);
    socket.close(TOKEN_ENDED_CLOSE[why].code, TOKEN_ENDED_CLOSE[why].reason);
  });
  socket.once('close', cancel);
}

/** graphql-ws's `onError`: the errors of an `error` message, masked as over HTTP. */
function errorsForClient(logger: Logger) {
  return ({ extra }: ConnectionContext, id: string, _payload: SubscribePayload, errors: readonly GraphQLError[]) => {
    // The socket is gone (closed for falling behind, or by the keep-alive): nothing reaches the
    // client, and the error is the cancelled write of a message to it, not a fault of ours.
    if (extra.socket.readyState !== WebSocket.OPEN) {
      logger.debug({ subscriptionId: id, errors: errors.map((e) => e.message) }, 'subscription ended with its socket');
      return errors.map(() => CONNECTION_GONE);
    }
    const formatted = errors.map((error) => formatWebSocketError(error, logger));
    // Internal faults are logged in full by formatError; this line carries only what the client saw.
    logger.warn({ subscriptionId: id, errors: formatted.map((e) => e.message) }, 'subscription operation failed');
    return formatted;
  };
}

/**
 * ws's heartbeat (its README's "detect and close broken connections") in place of graphql-ws's,
 * whose only verdict is to cut the socket: every `intervalMs` the socket is pinged, and one that
 * has not answered by the next ping is handed to its connection, which closes a client that
 * stopped reading with 1013 (it resumes with `after`) and cuts one that vanished, as graphql-ws would.
 */
function keepAlive(socket: WebSocket, intervalMs: number, connection: SocketConnection, holdsSubscriptions: () => boolean): void {
  if (socket.readyState === WebSocket.CLOSED) return;
  let answered = true;
  socket.on('pong', () => (answered = true));
  const timer = setInterval(() => {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (!answered) return connection.unresponsive(holdsSubscriptions());
    answered = false;
    socket.ping();
  }, intervalMs);
  socket.once('close', () => clearInterval(timer));
}
