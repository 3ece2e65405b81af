import { SpanKind, context, type Span } from '@opentelemetry/api';
import { errorName, inSpan, tracer, tracingOn, urlWithoutQuery } from './tracer.ts';

/** What a bank request's span may say about it: no headers, no body, the URL without its query. */
export interface BankRequestInfo {
  area: string;
  operation: string;
  method: string;
  url: string;
}

/** Lets the request's code add what it learns on the way (the HTTP status). */
export interface BankSpan {
  responded(status: number): void;
}

/** What a request's code records while tracing is off: nothing. */
const UNRECORDED: BankSpan = { responded: () => undefined };

/**
 * One CLIENT span per HTTP request sent to the bank (a retry is another request: `attempt` 2, and
 * `http.request.resend_count` 1), a child of whatever is active (the GraphQL operation). A failure
 * is recorded as `error.type`: the contract's code when the error carries one, else its class.
 */
export function traceBankRequest<T>(info: BankRequestInfo, attempt: number, send: (span: BankSpan) => Promise<T>): Promise<T> {
  if (!tracingOn()) return send(UNRECORDED);
  const url = urlWithoutQuery(info.url);
  const span: Span = tracer.startSpan(`${info.method} ${info.area}.${info.operation}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': info.method,
      'url.full': url.full,
      'server.address': url.host,
      ...(url.port === undefined ? {} : { 'server.port': url.port }),
      'bank.area': info.area,
      'bank.operation': info.operation,
      'bank.attempt': attempt,
      ...(attempt > 1 ? { 'http.request.resend_count': attempt - 1 } : {}),
    },
  });
  const recorder: BankSpan = { responded: (status) => span.setAttribute('http.response.status_code', status) };
  return inSpan(span, context.active(), () => send(recorder), failureCode);
}

/** The contract code of a classified bank failure (it carries `failure.code`), else the error's class. */
function failureCode(error: unknown): string {
  const code = (error as { failure?: { code?: unknown } } | undefined)?.failure?.code;
  return typeof code === 'string' ? code : errorName(error);
}
