/**
 * The operation limits wired into both transports: an Apollo Server plugin for HTTP (queries,
 * mutations, and the router's callback subscriptions, whose plugin runs them first), and
 * graphql-ws's `onSubscribe` for WebSocket, which never passes through Apollo's plugins.
 */
import type { ApolloServerPlugin, GraphQLRequest, GraphQLRequestContextDidResolveOperation } from '@apollo/server';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import {
  getOperationAST,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLSchema,
} from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import type { Context } from '../context.ts';
import type { OperationLimits } from '../limits/operation-limits.ts';

/**
 * Whether a request asks for Apollo Router's callback protocol (`extensions.subscription`, whatever
 * its value): its gates run in their own order, in the callback plugin (subscription-callback.ts).
 */
export function asksForCallback(request: GraphQLRequest): boolean {
  return request.extensions?.subscription !== undefined;
}

/**
 * What refuses an HTTP operation before anything runs on its behalf, with its HTTP status set: a
 * subscription without the callback protocol (nothing over plain HTTP could carry its events), or
 * an operation priced over the budget (no bank call). Undefined when it may go on.
 */
export function refuseHttpOperation(
  limits: OperationLimits,
  { document, operation, request, response }: GraphQLRequestContextDidResolveOperation<Context>,
): GraphQLError | undefined {
  // No such operation: Apollo answers that itself.
  if (operation === undefined) return undefined;
  if (operation.operation === 'subscription' && !asksForCallback(request)) {
    response.http.status = 400;
    return new GraphQLError(
      'A subscription is served over WebSocket (the graphql-transport-ws protocol, at this same URL), or over HTTP only through ' +
        "Apollo Router's callback protocol (extensions.subscription); a plain POST cannot carry its events.",
      { extensions: { code: ApolloServerErrorCode.BAD_REQUEST } },
    );
  }
  const refusal = limits.refuseTooExpensive(document, operation, request.variables);
  // Refused before it ran, like a document that fails validation.
  if (refusal !== undefined) response.http.status = 400;
  return refusal;
}

/**
 * Refuses, before execution, what `refuseHttpOperation` refuses, for every request but the callback
 * protocol's, whose plugin runs the same check first among its own.
 */
export function operationLimitsPlugin(limits: OperationLimits): ApolloServerPlugin<Context> {
  return {
    async requestDidStart({ request }) {
      if (asksForCallback(request)) return undefined;
      return {
        async didResolveOperation(resolved) {
          const refusal = refuseHttpOperation(limits, resolved);
          if (refusal !== undefined) throw refusal;
        },
      };
    },
  };
}

/**
 * graphql-ws's `onSubscribe`: parses with the token limit, validates with the armor rules, and
 * prices the operation. Returns the errors to send (graphql-ws then runs nothing), or the
 * execution arguments (graphql-ws adds the context).
 */
export function checkWebSocketOperation(
  schema: GraphQLSchema,
  limits: OperationLimits,
  payload: SubscribePayload,
): readonly GraphQLError[] | ExecutionArgs {
  let document: DocumentNode;
  try {
    document = parse(payload.query, limits.parseOptions);
  } catch (error) {
    const message = error instanceof GraphQLError ? error.message : 'Syntax Error: the document could not be read.';
    return [new GraphQLError(message, { extensions: { code: ApolloServerErrorCode.GRAPHQL_PARSE_FAILED } })];
  }
  const invalid = validate(schema, document, [...specifiedRules, ...limits.validationRules]);
  if (invalid.length > 0) {
    return invalid.map(
      (error) =>
        new GraphQLError(error.message, { nodes: error.nodes, extensions: { code: ApolloServerErrorCode.GRAPHQL_VALIDATION_FAILED } }),
    );
  }
  const operationName = payload.operationName ?? undefined;
  const operation = getOperationAST(document, operationName);
  // No such operation: graphql-ws answers that itself.
  const refusal = operation ? limits.refuseTooExpensive(document, operation, payload.variables) : undefined;
  if (refusal !== undefined) return [refusal];
  return { schema, document, operationName, variableValues: payload.variables };
}
