import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { FormattedExecutionResult, SubscribePayload } from 'graphql-ws';
import { isAuthenticated, type Caller } from '../auth/caller.ts';
import { createContext, type Context, type ContextDeps } from '../context.ts';
import type { Logger } from '../logger.ts';
import type { Headers } from '../telemetry/tracer.ts';
import { operationTrace, traceEvent, type OperationTrace } from '../telemetry/websocket.ts';
import type { SocketConnection } from './fanout/socket-connection.ts';
import { maskExecutionResult } from './format-error.ts';

/** Where one graphql-ws operation runs: its socket's connection, its `id` there, what the client sent, its trace. */
export interface WebSocketOperation {
  readonly connection: SocketConnection;
  readonly id: string;
  readonly request: SubscribePayload;
  readonly trace: OperationTrace | undefined;
}

/**
 * What graphql-ws's `context` callback builds for each operation on a socket: the resolvers'
 * Context (its stream ended through the socket's connection), and where the operation runs.
 */
export interface WebSocketContext extends Context {
  readonly webSocket: WebSocketOperation;
}

/** The context of operation `id` on a connection whose upgrade request carried `upgradeHeaders`. */
export function createWebSocketContext(
  services: ContextDeps,
  operation: {
    connection: SocketConnection;
    caller: Caller;
    id: string;
    request: SubscribePayload;
    upgradeHeaders: Headers;
    args: ExecutionArgs;
  },
): WebSocketContext {
  const { connection, caller, id, request } = operation;
  return {
    // No stream of its own ends with the token: the connection closes (4401) when the token ends.
    ...createContext(services, { caller, connection }),
    webSocket: { connection, id, request, trace: operationTrace(operation.upgradeHeaders, operation.args, isAuthenticated(caller)) },
  };
}

/**
 * The operation of an `execute`, `subscribe` or `onNext` call of graphql-ws: graphql-ws runs each
 * operation with what `context` built for it as the contextValue (its documented behaviour).
 */
export function webSocketOperation(args: ExecutionArgs): WebSocketOperation {
  const operation = (args.contextValue as Partial<WebSocketContext> | null | undefined)?.webSocket;
  if (operation === undefined) throw new Error('graphql-ws ran an operation without the context built for it');
  return operation;
}

/**
 * A result as a `next` message carries it: errors masked as over HTTP, inside the event's span.
 * The one place a WebSocket result is presented, whether graphql-ws sends it (`onNext`) or a
 * shared execution writes it once for all its members.
 */
export type ResultPresenter = (trace: OperationTrace | undefined, result: ExecutionResult) => FormattedExecutionResult;

/** The presenter whose masking logs our own faults to `logger`. */
export function createResultPresenter(logger: Logger): ResultPresenter {
  return (trace, result) => traceEvent(trace, result.errors !== undefined, () => maskExecutionResult(result, logger));
}
