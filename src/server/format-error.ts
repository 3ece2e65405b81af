import { ApolloServerErrorCode, unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import { ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';

// Codes whose messages are ours to show: the contract's, and Apollo's request errors (parse,
// validation, variables), which speak only of the caller's own document. Never its internal one.
const SAFE_CODES = new Set<string>([
  ...Object.values(ErrorCode),
  ...Object.values(ApolloServerErrorCode).filter((code) => code !== ApolloServerErrorCode.INTERNAL_SERVER_ERROR),
]);

/**
 * Apollo's refusals of an automatic persisted query that carry no code, by their message: a hash
 * that does not match its query, a protocol version it does not know. They get the codes APQ
 * clients read (test/client-mistakes.test.ts pins the messages of the Apollo Server in use).
 */
const PERSISTED_QUERY_REFUSALS = new Map<string, string>([
  ['provided sha does not match query', 'PERSISTED_QUERY_HASH_MISMATCH'],
  ['Unsupported persisted query version', ApolloServerErrorCode.PERSISTED_QUERY_NOT_SUPPORTED],
]);

/**
 * The error as a client may see it. Errors with a known code pass unchanged; anything else is a
 * fault of ours, logged in full and answered with a bare INTERNAL_SERVER_ERROR, since its message
 * may hold a URL, a query or a driver's detail. Used by HTTP (Apollo) and WebSocket alike.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown, logger: Logger): GraphQLFormattedError {
  // Bank failures are logged once, where they happen (upstream/http.ts); ours are logged here.
  const code = formatted.extensions?.code;
  if (typeof code === 'string' && SAFE_CODES.has(code)) return formatted;
  const persistedQuery = apolloRequestError(error) ? PERSISTED_QUERY_REFUSALS.get(error.message) : undefined;
  if (persistedQuery !== undefined) return { ...formatted, extensions: { ...formatted.extensions, code: persistedQuery } };
  const original = unwrapResolverError(error);
  logger.error({ err: original, path: formatted.path }, 'unexpected error in a GraphQL operation');
  return {
    message: 'Internal server error.',
    ...(formatted.locations && { locations: formatted.locations }),
    ...(formatted.path && { path: formatted.path }),
    extensions: { code: ApolloServerErrorCode.INTERNAL_SERVER_ERROR },
  };
}

/** An error Apollo raised about the request itself (no resolver's, no wrapped fault): Apollo gives it INTERNAL_SERVER_ERROR when it has no code. */
function apolloRequestError(error: unknown): error is GraphQLError {
  return error instanceof GraphQLError && error.originalError === undefined && error.path === undefined;
}

/** `formatError` for a graphql-js error that never went through Apollo (WebSocket results). */
export function formatGraphQLError(error: GraphQLError, logger: Logger): GraphQLFormattedError {
  return formatError(error.toJSON(), error, logger);
}

/** A subscription result as a client may see it: its errors through `formatGraphQLError`, the rest as is. */
export function maskExecutionResult(
  result: ExecutionResult,
  logger: Logger,
): ExecutionResult | (Omit<ExecutionResult, 'errors'> & { errors: GraphQLFormattedError[] }) {
  return result.errors ? { ...result, errors: result.errors.map((error) => formatGraphQLError(error, logger)) } : result;
}

/**
 * `formatError` for the errors graphql-ws sends in an `error` message, which skip `onNext`: graphql-js's
 * verdict on the client's own document (no original error; given Apollo's code), or an error thrown
 * by the stream mid-way, whose raw message may hold a URL or a driver's detail.
 */
export function formatWebSocketError(error: GraphQLError, logger: Logger): GraphQLFormattedError {
  if (error.originalError === undefined && error.extensions.code === undefined) {
    return { ...error.toJSON(), extensions: { ...error.extensions, code: ApolloServerErrorCode.GRAPHQL_VALIDATION_FAILED } };
  }
  return formatGraphQLError(error, logger);
}
