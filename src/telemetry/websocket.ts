import { SpanKind, context, trace, type Context } from '@opentelemetry/api';
import { execute, getOperationAST, subscribe, type ExecutionArgs } from 'graphql';
import { contextFromHeaders, inSpan, markFailed, tracer, type Headers } from './tracer.ts';

/** Per graphql-ws operation (keyed by its context value): the trace it belongs to, and what it is. */
interface OperationTrace {
  /** The upgrade request's context at first; the operation span's once it has started. */
  parent: Context;
  type: string;
  name: string | undefined;
}

const operations = new WeakMap<object, OperationTrace>();

/**
 * Ties a graphql-ws operation's context value to the WebSocket upgrade request's `traceparent`
 * (the router's), so the operation's span and its events are children of the router's span.
 */
export function withUpgradeTrace<T extends object>(contextValue: T, upgradeHeaders: Headers, args: ExecutionArgs): T {
  const operation = getOperationAST(args.document, args.operationName);
  operations.set(contextValue, {
    parent: contextFromHeaders(upgradeHeaders),
    type: operation?.operation ?? 'unknown',
    name: args.operationName ?? operation?.name?.value,
  });
  return contextValue;
}

function traceOf(args: ExecutionArgs): OperationTrace | undefined {
  const key = args.contextValue;
  return typeof key === 'object' && key !== null ? operations.get(key) : undefined;
}

function spanName(trace: OperationTrace): string {
  return trace.name ? `${trace.type} ${trace.name}` : trace.type;
}

function attributes(trace: OperationTrace) {
  return { 'graphql.operation.type': trace.type, ...(trace.name ? { 'graphql.operation.name': trace.name } : {}), 'network.protocol.name': 'websocket' };
}

/** graphql-js `execute` or `subscribe` inside a SERVER span for the operation, active while it runs. */
export function traced<R>(run: (args: ExecutionArgs) => R | Promise<R>) {
  return async (args: ExecutionArgs): Promise<R> => {
    const operation = traceOf(args);
    if (operation === undefined) return run(args);
    const parent = operation.parent;
    const span = tracer.startSpan(spanName(operation), { kind: SpanKind.SERVER, attributes: attributes(operation) }, parent);
    // Events of a subscription become children of its span, though it ends once the stream is set up.
    operation.parent = trace.setSpan(parent, span);
    return inSpan(span, parent, async () => {
      const result = await run(args);
      const errors = (result as { errors?: readonly { extensions?: Record<string, unknown> }[] }).errors;
      if (errors?.length) markFailed(span, String(errors[0]?.extensions?.code ?? 'UNKNOWN'));
      return result;
    });
  };
}

/** graphql-ws's `execute` option: queries and mutations over WebSocket, traced. */
export const tracedExecute = traced(execute);
/** graphql-ws's `subscribe` option: a subscription's set-up, traced. */
export const tracedSubscribe = traced(subscribe);

/**
 * A span for one subscription event handed to graphql-ws for sending (`next`), a child of the
 * subscription's span; `deliver` formats the event. Queries' single results are not events.
 */
export function traceSubscriptionEvent<R>(args: ExecutionArgs, hasErrors: boolean, deliver: () => R): R {
  const operation = traceOf(args);
  if (operation === undefined || operation.type !== 'subscription') return deliver();
  const span = tracer.startSpan(`${spanName(operation)} event`, { kind: SpanKind.PRODUCER, attributes: attributes(operation) }, operation.parent);
  try {
    return context.with(trace.setSpan(operation.parent, span), deliver);
  } finally {
    if (hasErrors) markFailed(span, 'GRAPHQL_ERRORS');
    span.end();
  }
}
