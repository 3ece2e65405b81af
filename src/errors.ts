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
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  UNAUTHORIZED_FIELD_OR_TYPE: 'UNAUTHORIZED_FIELD_OR_TYPE',
  FORBIDDEN: 'FORBIDDEN',
  COST_ESTIMATED_TOO_EXPENSIVE: 'COST_ESTIMATED_TOO_EXPENSIVE',
  COST_ACTUAL_TOO_EXPENSIVE: 'COST_ACTUAL_TOO_EXPENSIVE',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export type UpstreamErrorCode = Extract<ErrorCode, `UPSTREAM_${string}`>;

/** Refuses input our own validation rejects, before any upstream call; names the argument. */
export function badUserInput(argumentName: string, message: string): GraphQLError {
  return new GraphQLError(`${argumentName}: ${message}`, {
    extensions: { code: ErrorCode.BAD_USER_INPUT, argumentName },
  });
}

/**
 * Refuses a field that needs a valid access token to a caller without one; `problem` says what was
 * wrong with the token (missing, expired, …), never anything of its contents.
 */
export function unauthenticated(problem: string): GraphQLError {
  return new GraphQLError(`This field needs a valid access token (Authorization: Bearer <JWT>): ${problem}.`, {
    extensions: { code: ErrorCode.UNAUTHENTICATED },
  });
}

/** Refuses a field whose scopes the caller's valid token lacks (the routers' code); names what would do. */
export function unauthorizedField(needed: readonly (readonly string[])[]): GraphQLError {
  const alternatives = needed.map((scopes) => scopes.join(' and ')).join(', or ');
  return new GraphQLError(`The access token lacks the scope this field needs: ${alternatives}.`, {
    extensions: { code: ErrorCode.UNAUTHORIZED_FIELD_OR_TYPE },
  });
}

/** Refuses an account, or a record of one, that the caller's token does not name. */
export function forbiddenAccount(what: string): GraphQLError {
  return new GraphQLError(`${what} is not among the accounts the access token names.`, {
    extensions: { code: ErrorCode.FORBIDDEN },
  });
}

/**
 * Refuses a subscription over the callback protocol whose callback URL is not allowed
 * (`SUBSCRIPTION_CALLBACK_URLS`), before any request is sent to it. HTTP 400.
 */
export function callbackUrlRefused(allowed: 'any' | readonly unknown[]): GraphQLError {
  const message =
    allowed !== 'any' && allowed.length === 0
      ? 'This subgraph does not serve the subscription callback protocol (SUBSCRIPTION_CALLBACK_URLS is unset outside the sandbox); subscribe over WebSocket.'
      : 'The subscription callback URL is not one this subgraph may call (SUBSCRIPTION_CALLBACK_URLS); nothing was sent to it.';
  return new GraphQLError(message, { extensions: { code: ErrorCode.BAD_USER_INPUT, http: { status: 400 } } });
}

/**
 * Refuses an operation before it runs: its estimated bank calls (priced by the schema's `@cost` and
 * `@listSize`) and store reads exceed `MAX_OPERATION_COST`. Apollo Router's demand-control code.
 */
export function costEstimatedTooExpensive(estimated: number, max: number): GraphQLError {
  return new GraphQLError(
    `This operation may make an estimated ${estimated} bank calls and store reads, more than the ${max} one operation is allowed ` +
      '(MAX_OPERATION_COST). Ask for fewer bank-backed fields or shorter ranges, or split it into several operations.',
    { extensions: { code: ErrorCode.COST_ESTIMATED_TOO_EXPENSIVE, cost: { estimated, max } } },
  );
}

/** Refuses one bank call of a running operation that has used up its `MAX_OPERATION_COST` calls. */
export function costActualTooExpensive(max: number): GraphQLError {
  return new GraphQLError(
    `This operation has already made the ${max} bank calls one operation is allowed (MAX_OPERATION_COST), ` +
      'so this field was not fetched. Ask for it in another operation.',
    { extensions: { code: ErrorCode.COST_ACTUAL_TOO_EXPENSIVE, cost: { max } } },
  );
}

export interface UpstreamErrorDetails {
  /** Which bank area and operation failed, e.g. `account`/`lookupAccount`; for logs and metrics. */
  area: string;
  operation: string;
  /** The bank's own code and message, when it gave them. */
  responseCode?: string | undefined;
  responseMessage?: string | undefined;
  /** The bank's HTTP status, where it answered with one (a 200 whose body refused included). */
  status?: number | undefined;
  /** The call ran out of its time budget (connect, headers or body) with no answer. */
  timedOut?: boolean | undefined;
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
  /** The bank's HTTP status, `undefined` where none came (no connection, a time-out, an open circuit). */
  readonly status: number | undefined;
  /** Whether the call ran out of time: kept apart, since a slow bank is asked less often, not refused. */
  readonly timedOut: boolean;

  constructor(code: UpstreamErrorCode, details: UpstreamErrorDetails, message = defaultMessage(code)) {
    const extensions: Record<string, unknown> = { code };
    if (details.responseCode !== undefined) extensions.responseCode = details.responseCode;
    if (details.responseMessage !== undefined) extensions.responseMessage = details.responseMessage;
    super(message, { extensions });
    this.name = 'UpstreamError';
    this.code = code;
    this.area = details.area;
    this.operation = details.operation;
    this.status = details.status;
    this.timedOut = details.timedOut === true;
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
