import { SpanKind, context, trace, type Span } from '@opentelemetry/api';
import type { ApolloServerPlugin, GraphQLRequestContextDidResolveOperation } from '@apollo/server';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { Kind, type OperationDefinitionNode } from 'graphql';
import { codeOf, contextFromHeaders, inSpan, markFailed, tracer, tracingOn } from './tracer.ts';

/**
 * Wraps the /graphql route's handler in a SERVER span, a child of the caller's `traceparent` (the
 * router's fetch), and runs it with that span active, so every bank call the operation makes is
 * its child. `graphqlOperationSpanPlugin` names the span once the operation is known.
 */
export function traceGraphQLHandler(handler: RouteHandlerMethod): RouteHandlerMethod {
  return async function traced(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
    if (!tracingOn()) return handler.call(this, request, reply);
    const parent = contextFromHeaders(request.headers);
    const span = tracer.startSpan(
      `${request.method} ${request.routeOptions.url ?? '/graphql'}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': request.method, 'http.route': request.routeOptions.url ?? '/graphql' },
      },
      parent,
    );
    return inSpan(span, parent, async () => {
      try {
        return await handler.call(this, request, reply);
      } finally {
        span.setAttribute('http.response.status_code', reply.statusCode);
      }
    });
  };
}

/** The span attribute saying whether the caller had a valid token: never who. */
export const CALLER_AUTHENTICATED_ATTRIBUTE = 'graphql.caller.authenticated';

/** Records on the active span (the request's) whether its caller was authenticated. */
export function markCallerAuthenticated(authenticated: boolean): void {
  trace.getActiveSpan()?.setAttribute(CALLER_AUTHENTICATED_ATTRIBUTE, authenticated);
}

/**
 * Names the active operation span `<type> <name>` (the GraphQL semantic conventions) and records
 * the operation's type, name and root fields, never its variables or document; a response with
 * errors marks it failed with the first error's code.
 */
export function graphqlOperationSpanPlugin<C extends object>(): ApolloServerPlugin<C> {
  return {
    async requestDidStart() {
      const span: Span | undefined = trace.getSpan(context.active());
      if (span === undefined || !span.isRecording()) return;
      return {
        async didResolveOperation({ operation, operationName }: GraphQLRequestContextDidResolveOperation<C>) {
          if (operation === undefined) return;
          span.updateName(operationName ? `${operation.operation} ${operationName}` : operation.operation);
          span.setAttributes({
            'graphql.operation.type': operation.operation,
            ...(operationName ? { 'graphql.operation.name': operationName } : {}),
            'graphql.operation.root_fields': rootFields(operation),
          });
        },
        async willSendResponse({ response }) {
          const body = response.body;
          const errors = body.kind === 'single' ? body.singleResult.errors : body.initialResult.errors;
          if (!errors?.length) return;
          span.setAttribute('graphql.errors.count', errors.length);
          markFailed(span, codeOf(errors[0]?.extensions?.code));
        },
      };
    },
  };
}

/** The schema's field names selected at the root (not their aliases or arguments): "account,banks". */
function rootFields(operation: OperationDefinitionNode): string {
  const names = operation.selectionSet.selections.flatMap((selection) => (selection.kind === Kind.FIELD ? [selection.name.value] : []));
  return [...new Set(names)].join(',');
}

/**
 * A span for one message of Apollo Router's HTTP callback protocol that carries a subscription
 * event (`next`), a child of the subscription request's span; `check`, heartbeats and `complete`
 * are not events and are sent untraced.
 */
export function traceCallbackMessage<T>(body: string, send: () => Promise<T>): Promise<T> {
  if (!/"action"\s*:\s*"next"/.test(body)) return send();
  const span = tracer.startSpan('subscription event', {
    kind: SpanKind.PRODUCER,
    attributes: { 'graphql.operation.type': 'subscription', 'network.protocol.name': 'http' },
  });
  return inSpan(span, context.active(), send);
}
