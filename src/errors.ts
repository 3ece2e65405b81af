import { GraphQLError } from 'graphql';

/** The contract's error codes (`extensions.code`); the only codes this subgraph's resolvers raise. */
export const ErrorCode = {
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  UPSTREAM_REJECTED: 'UPSTREAM_REJECTED',
  UPSTREAM_BAD_REQUEST: 'UPSTREAM_BAD_REQUEST',
  UPSTREAM_UNAUTHORIZED: 'UPSTREAM_UNAUTHORIZED',
  UPSTREAM_UNAVAILABLE: 'UPSTREAM_UNAVAILABLE',
  UPSTREAM_INVALID_RESPONSE: 'UPSTREAM_INVALID_RESPONSE',
  ROUTER_SECRET_REQUIRED: 'ROUTER_SECRET_REQUIRED',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export type UpstreamErrorCode = Exclude<ErrorCode, 'BAD_USER_INPUT' | 'ROUTER_SECRET_REQUIRED'>;

/** Refuses input our own validation rejects, before any upstream call; names the argument. */
export function badUserInput(argumentName: string, message: string): GraphQLError {
  return new GraphQLError(`${argumentName}: ${message}`, {
    extensions: { code: ErrorCode.BAD_USER_INPUT, argumentName },
  });
}

export interface UpstreamErrorDetails {
  /** Which bank area and operation failed, e.g. `account`/`lookupAccount`; for logs and metrics. */
  area: string;
  operation: string;
  /** The bank's own code and message, when it gave them. */
  responseCode?: string | undefined;
  responseMessage?: string | undefined;
  /** The underlying failure, for logs only: never serialised into a response. */
  cause?: unknown;
}

/**
 * A failure of a call to the bank, already mapped to the contract's code. Its message says what
 * the caller can do, and never holds a URL, a credential or a stack.
 */
export class UpstreamError extends GraphQLError {
  readonly code: UpstreamErrorCode;
  readonly area: string;
  readonly operation: string;

  constructor(code: UpstreamErrorCode, details: UpstreamErrorDetails, message = defaultMessage(code)) {
    const extensions: Record<string, unknown> = { code };
    if (details.responseCode !== undefined) extensions.responseCode = details.responseCode;
    if (details.responseMessage !== undefined) extensions.responseMessage = details.responseMessage;
    super(message, { extensions });
    this.name = 'UpstreamError';
    this.code = code;
    this.area = details.area;
    this.operation = details.operation;
    // Kept off `originalError` so nothing of it can reach a response; logged by the caller.
    Object.defineProperty(this, 'cause', { value: details.cause, enumerable: false });
  }
}

function defaultMessage(code: UpstreamErrorCode): string {
  switch (code) {
    case 'UPSTREAM_REJECTED':
      return 'The bank declined the request.';
    case 'UPSTREAM_BAD_REQUEST':
      return 'The bank refused the request as malformed; check the subgraph configuration.';
    case 'UPSTREAM_UNAUTHORIZED':
      return "The bank refused the subgraph's credentials; check the configured bank credentials.";
    case 'UPSTREAM_UNAVAILABLE':
      return 'The bank is unavailable right now; try again shortly.';
    case 'UPSTREAM_INVALID_RESPONSE':
      return 'The bank answered with something other than the documented JSON.';
  }
}

/**
 * What the bank's HTTP status means for the contract, given who supplied the refused input:
 * `caller` when the request carried the user's own credentials or tokens (wallet login, logout,
 * refresh, reset), `subgraph` when it carried only the subgraph's configuration.
 */
export function codeForStatus(status: number, supplier: 'caller' | 'subgraph'): UpstreamErrorCode | undefined {
  if (status >= 500) return ErrorCode.UPSTREAM_UNAVAILABLE;
  if (status >= 400 && supplier === 'caller') return ErrorCode.UPSTREAM_REJECTED;
  if (status === 401 || status === 403) return ErrorCode.UPSTREAM_UNAUTHORIZED;
  if (status === 408 || status === 429) return ErrorCode.UPSTREAM_UNAVAILABLE;
  if (status >= 400) return ErrorCode.UPSTREAM_BAD_REQUEST;
  return undefined;
}
