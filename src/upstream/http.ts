/**
 * The one way this subgraph calls the bank: undici with a single time budget per call, every
 * failure mapped to the contract's codes here, a circuit breaker per area, a metric per call and a
 * warn line per failure. Area modules build the request and read the answer; nothing else does.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request } from 'undici';
import { ErrorCode, UpstreamError, codeForStatus } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { traceBankRequest, type BankSpan } from '../telemetry/bank.ts';
import { AnswerRefused, type AnswerFailure } from './read.ts';
import { createAreaBreaker, createRetrier, defaultBreakerOptions, type AreaBreaker } from './resilience.ts';

export type BankArea = 'account' | 'transaction' | 'billing' | 'wallet' | 'posting' | 'collection';

/** A bank answer handed to an area's reader. */
export interface BankResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; `undefined` when there is none (or, where allowed, when it is not JSON). */
  body: unknown;
  /** The body exactly as received. */
  text: string;
}

/** One call to the bank, as an area module describes it. */
export interface BankCall<T> {
  area: BankArea;
  operation: string;
  method: 'GET' | 'POST';
  /** Absolute URL, query included. Never logged: it may carry account numbers. */
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Who supplied what the bank may refuse: the caller's own credentials, or our configuration. */
  supplier: 'caller' | 'subgraph';
  /** `json` (default): a 2xx must carry JSON. `optional`: any body or none is accepted. */
  expect?: 'json' | 'optional';
  /** A read, safe to send again: retried on a transient fault. Never set for what may change state. */
  idempotent?: boolean;
  /** Hand 3xx answers to `read` instead of refusing them (op 4's redirect form). */
  acceptRedirect?: boolean;
  /** Parses a JSON body (`JSON.parse` by default); throws on text that is not JSON. */
  parse?: (text: string) => unknown;
  /** Reads a 4xx/5xx body for the bank's code and message, or a different contract code. */
  readFailure?: (status: number, body: unknown) => Partial<AnswerFailure> | undefined;
  /** Maps a success to the domain; throws `AnswerRefused` for anything else. */
  read: (response: BankResponse) => T;
}

export interface BankHttpOptions {
  timeoutMs: number;
  logger: Logger;
  metrics: Pick<Metrics, 'upstreamRequestDuration' | 'bankCircuitOpen' | 'bankRetries'>;
}

/** The shared bank call: `call()` answers the reader's value or throws an `UpstreamError`. */
export interface BankHttp {
  call<T>(call: BankCall<T>): Promise<T>;
  close(): Promise<void>;
}

/** A failure already classified inside the breaker, with the HTTP status, and whether time ran out. */
class CallFailure extends Error {
  readonly failure: AnswerFailure;
  readonly status: number | undefined;
  readonly timedOut: boolean;

  constructor(failure: AnswerFailure, status?: number, cause?: unknown, timedOut = false) {
    super(failure.reason ?? failure.code, { cause });
    this.failure = failure;
    this.status = status;
    this.timedOut = timedOut;
  }
}

const DEFAULT_HEADERS = { accept: 'application/json', 'user-agent': 'bank-subgraph' };
/** No answer of the documented operations comes near this; a larger one is not the documented JSON. */
const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

/** Creates the shared call over one keep-alive undici Agent that never follows redirects. */
export function createBankHttp(options: BankHttpOptions): BankHttp {
  const { timeoutMs, logger, metrics } = options;
  const agent = new Agent({
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    maxResponseSize: MAX_RESPONSE_BYTES,
  });
  const breakers = new Map<BankArea, AreaBreaker>();
  const breakerFor = (area: BankArea) => {
    let breaker = breakers.get(area);
    if (breaker === undefined) {
      breaker = createAreaBreaker(area, defaultBreakerOptions, { logger, metrics, counts: isUnavailability });
      breakers.set(area, breaker);
    }
    return breaker;
  };
  const retrier = createRetrier({
    timeoutMs,
    onRetry: (call, { attempt: number, delayMs, error }) => {
      metrics.bankRetries.inc({ area: call.area, operation: call.operation, decision: 'retried' });
      const { failure, status } = classify(error);
      logger.info(
        { area: call.area, operation: call.operation, attempt: number, delayMs, status, reason: failure.reason },
        'bank call failed, retrying',
      );
    },
    onGiveUp: (call, reason) => metrics.bankRetries.inc({ area: call.area, operation: call.operation, decision: reason }),
  });

  return {
    async call<T>(call: BankCall<T>): Promise<T> {
      const started = performance.now();
      const labels = { area: call.area, operation: call.operation };
      let attempts = 0;
      // Each attempt is its own request (and span), given what is left of the call's one time budget.
      const attempt = (remainingMs: number) => {
        attempts += 1;
        return traceBankRequest(call, attempts, (span) => sendOnce(agent, remainingMs, call, span));
      };
      const retried = { ...labels, idempotent: call.idempotent === true };
      try {
        // The breaker around the retries: it weighs the call's last failure once, and an open
        // circuit refuses before the retrier is reached (resilience.ts says why).
        const result = (await breakerFor(call.area).fire(() => retrier.run(retried, attempt, isTransient))) as T;
        metrics.upstreamRequestDuration.observe({ ...labels, outcome: 'ok' }, seconds(started));
        return result;
      } catch (error) {
        const { failure, status, timedOut, cause } = classify(error);
        metrics.upstreamRequestDuration.observe({ ...labels, outcome: failure.code }, seconds(started));
        const line = { ...labels, status, code: failure.code, reason: failure.reason, attempts };
        // A fast failure of an open circuit was already announced when it opened.
        if (failure.reason === 'circuit open') logger.debug(line, 'bank call failed fast');
        else logger.warn(line, 'bank call failed');
        const { responseCode, responseMessage } = failure;
        throw new UpstreamError(failure.code, { ...labels, responseCode, responseMessage, status, timedOut, cause });
      }
    },
    async close() {
      for (const breaker of breakers.values()) breaker.shutdown();
      // Closed once nothing waits for the bank (the server drained, the confirmer stopped): a call
      // still in flight (a confirmation whose answer the bank holds) is cut, not waited for, so the
      // drain keeps its budget whatever BANK_TIMEOUT_MS is.
      await agent.destroy();
    },
  };
}

function isUnavailability(error: unknown): boolean {
  return error instanceof CallFailure && error.failure.code === ErrorCode.UPSTREAM_UNAVAILABLE;
}

/** Worth another attempt: a 5xx, or a connection reset or refused. Never a time-out or a 4xx. */
const TRANSIENT_REASONS = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'ECONNREFUSED']);
function isTransient(error: unknown): boolean {
  if (!isUnavailability(error)) return false;
  const { status, failure } = error as CallFailure;
  return (status !== undefined && status >= 500) || TRANSIENT_REASONS.has(failure.reason ?? '');
}

/** One request, body read whole as text, within what is left of the call's time budget; then its meaning. */
async function sendOnce(agent: Agent, timeoutMs: number, call: BankCall<unknown>, span: BankSpan): Promise<unknown> {
  let status: number;
  let headers: IncomingHttpHeaders;
  let text: string;
  try {
    // One signal for the whole call; the Agent's connect/headers/body time-outs match it.
    const response = await request(call.url, {
      dispatcher: agent,
      method: call.method,
      headers: { ...DEFAULT_HEADERS, ...call.headers },
      body: call.body ?? null,
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = response.statusCode;
    span.responded(status);
    headers = response.headers;
    text = await response.body.text();
  } catch (error) {
    throw transportFailure(call, error);
  }
  return interpret(call, status, headers, text);
}

/** Status and body → the reader's value, or a classified failure. */
function interpret(call: BankCall<unknown>, status: number, headers: IncomingHttpHeaders, text: string): unknown {
  const redirect = status >= 300 && status < 400;
  if ((status >= 200 && status < 300) || (redirect && call.acceptRedirect === true)) {
    const strict = !redirect && (call.expect ?? 'json') === 'json';
    const body = strict ? parseJson(call, text, status) : tryParseJson(call, text);
    try {
      return call.read({ status, headers, body, text });
    } catch (error) {
      if (error instanceof AnswerRefused) throw new CallFailure(error.failure, status);
      // A reader that trips over the body (a bug, or a shape we did not foresee): not the documented JSON.
      throw new CallFailure({ code: ErrorCode.UPSTREAM_INVALID_RESPONSE, reason: 'unreadable answer' }, status, error);
    }
  }
  const code = codeForStatus(status, call.supplier);
  if (code === undefined) {
    // A redirect or informational answer to a JSON API: a moved endpoint or a login page.
    throw new CallFailure({ code: ErrorCode.UPSTREAM_INVALID_RESPONSE, reason: 'unexpected status' }, status);
  }
  const details = call.readFailure?.(status, tryParseJson(call, text));
  throw new CallFailure({ ...details, code: details?.code ?? code, reason: details?.reason ?? 'refused by status' }, status);
}

function parseJson(call: BankCall<unknown>, text: string, status: number): unknown {
  if (text.trim() === '') {
    throw new CallFailure({ code: ErrorCode.UPSTREAM_INVALID_RESPONSE, reason: 'empty body' }, status);
  }
  try {
    return (call.parse ?? JSON.parse)(text);
  } catch {
    // An HTML error page from a proxy lands here too.
    throw new CallFailure({ code: ErrorCode.UPSTREAM_INVALID_RESPONSE, reason: 'body is not JSON' }, status);
  }
}

function tryParseJson(call: BankCall<unknown>, text: string): unknown {
  try {
    return text.trim() === '' ? undefined : (call.parse ?? JSON.parse)(text);
  } catch {
    return undefined;
  }
}

/** undici/socket errors → the contract. Only the error's code goes to the log, never its message. */
function transportFailure(call: BankCall<unknown>, error: unknown): CallFailure {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  const reason = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown';
  if (reason === 'UND_ERR_INVALID_ARG') {
    // undici refused to send it (a header value with a line break): the request's own input is bad.
    const refused = call.supplier === 'caller' ? ErrorCode.UPSTREAM_REJECTED : ErrorCode.UPSTREAM_BAD_REQUEST;
    return new CallFailure({ code: refused, reason: 'request could not be sent' }, undefined, error);
  }
  if (reason === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
    return new CallFailure({ code: ErrorCode.UPSTREAM_INVALID_RESPONSE, reason }, undefined, error);
  }
  // Refused, reset, DNS, time-out (TimeoutError), socket closed, TLS: the bank cannot be reached.
  return new CallFailure({ code: ErrorCode.UPSTREAM_UNAVAILABLE, reason }, undefined, error, TIME_OUTS.has(reason));
}

/** What undici and `AbortSignal.timeout` call running out of the call's budget. */
const TIME_OUTS: ReadonlySet<string> = new Set([
  'TimeoutError',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

interface Classified {
  failure: AnswerFailure;
  status?: number | undefined;
  timedOut?: boolean | undefined;
  cause?: unknown;
}

function classify(error: unknown): Classified {
  if (error instanceof CallFailure) return { failure: error.failure, status: error.status, timedOut: error.timedOut, cause: error.cause };
  if (error instanceof Error && (error as { code?: unknown }).code === 'EOPENBREAKER') {
    return { failure: { code: ErrorCode.UPSTREAM_UNAVAILABLE, reason: 'circuit open' } };
  }
  // opossum after shutdown, or anything unforeseen: the bank cannot be reached through us now.
  return { failure: { code: ErrorCode.UPSTREAM_UNAVAILABLE, reason: 'call not attempted' }, cause: error };
}

function seconds(started: number): number {
  return (performance.now() - started) / 1000;
}

/** `base` (which may carry a path prefix, kept) + `path` + the query, URL-encoded; unset values left out. */
export function bankUrl(base: string, path: string, query?: Record<string, string | undefined>): string {
  const url = base.replace(/\/+$/, '') + path;
  if (query === undefined) return url;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
  const search = params.toString();
  return search === '' ? url : `${url}?${search}`;
}

/** `Basic base64(utf8(user ":" password))`: Buffer's base64 of the UTF-8 bytes, so any character works. */
export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}
