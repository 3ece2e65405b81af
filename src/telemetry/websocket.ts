import { SpanKind, context, trace, type Context } from '@opentelemetry/api';
import { getOperationAST, type ExecutionArgs } from 'graphql';
import { CALLER_AUTHENTICATED_ATTRIBUTE } from './graphql.ts';
import { codeOf, contextFromHeaders, inSpan, markFailed, tracer, tracingOn, type Headers } from './tracer.ts';

/**
 * One graphql-ws operation's place in a trace: under the WebSocket upgrade request's `traceparent`
 * (the router's) until its span starts, then under that span, so its events are its children.
 */
export interface OperationTrace {
  parent: Context;
  readonly type: string;
  readonly name: string | undefined;
  /** Whether the connection's caller had a valid token: never who. */
  readonly authenticated: boolean;
}

/** The trace of an operation on a socket opened with `upgradeHeaders`; undefined while tracing is off. */
export function operationTrace(upgradeHeaders: Headers, args: ExecutionArgs, authenticated: boolean): OperationTrace | undefined {
  if (!tracingOn()) return undefined;
  const operation = getOperationAST(args.document, args.operationName);
  return {
    parent: contextFromHeaders(upgradeHeaders),
    type: operation?.operation ?? 'unknown',
    name: args.operationName ?? operation?.name?.value,
    authenticated,
  };
}

function spanName(operation: OperationTrace): string {
  return operation.name ? `${operation.type} ${operation.name}` : operation.type;
}

function attributes(operation: OperationTrace) {
  return {
    'graphql.operation.type': operation.type,
    ...(operation.name ? { 'graphql.operation.name': operation.name } : {}),
    'network.protocol.name': 'websocket',
    [CALLER_AUTHENTICATED_ATTRIBUTE]: operation.authenticated,
  };
}

/** Runs graphql-js `execute` or `subscribe` inside a SERVER span for the operation, active while it runs. */
export async function inOperationSpan<R>(operation: OperationTrace | undefined, run: () => R | Promise<R>): Promise<R> {
  if (operation === undefined) return run();
  const parent = operation.parent;
  const span = tracer.startSpan(spanName(operation), { kind: SpanKind.SERVER, attributes: attributes(operation) }, parent);
  // Events of a subscription become children of its span, though it ends once the stream is set up.
  operation.parent = trace.setSpan(parent, span);
  return inSpan(span, parent, async () => {
    const result = await run();
    const errors = (result as { errors?: readonly { extensions?: Record<string, unknown> }[] }).errors;
    if (errors?.length) markFailed(span, codeOf(errors[0]?.extensions?.code));
    return result;
  });
}

/**
 * A span for one subscription event, a child of the subscription's span, around `present` (which
 * makes the event's `next` payload). Queries' single results are not events.
 */
export function traceEvent<R>(operation: OperationTrace | undefined, hasErrors: boolean, present: () => R): R {
  if (operation === undefined || operation.type !== 'subscription') return present();
  const span = tracer.startSpan(
    `${spanName(operation)} event`,
    { kind: SpanKind.PRODUCER, attributes: attributes(operation) },
    operation.parent,
  );
  try {
    return context.with(trace.setSpan(operation.parent, span), present);
  } finally {
    if (hasErrors) markFailed(span, 'GRAPHQL_ERRORS');
    span.end();
  }
}
