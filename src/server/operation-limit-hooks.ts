/**
 * The operation limits wired into both transports: an Apollo Server plugin for HTTP (queries,
 * mutations, and the router's callback subscriptions), and graphql-ws's `onSubscribe` for WebSocket,
 * which never passes through Apollo's plugins.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import { getOperationAST, GraphQLError, parse, specifiedRules, validate, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import type { Context } from '../context.ts';
import type { OperationLimits } from '../limits/operation-limits.ts';

/** Refuses, before execution, an HTTP operation priced over the budget (HTTP 400, no bank call). */
export function operationCostPlugin(limits: OperationLimits): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operation, request, response }) {
          if (operation === undefined) return;
          const refusal = limits.refuseTooExpensive(document, operation, request.variables);
          if (refusal === undefined) return;
          // Refused before it ran, like a document that fails validation.
          response.http.status = 400;
          throw refusal;
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
    return invalid.map((error) => new GraphQLError(error.message, { nodes: error.nodes, extensions: { code: ApolloServerErrorCode.GRAPHQL_VALIDATION_FAILED } }));
  }
  const operationName = payload.operationName ?? undefined;
  const operation = getOperationAST(document, operationName);
  // No such operation: graphql-ws answers that itself.
  const refusal = operation ? limits.refuseTooExpensive(document, operation, payload.variables) : undefined;
  if (refusal !== undefined) return [refusal];
  return { schema, document, operationName, variableValues: payload.variables };
}
