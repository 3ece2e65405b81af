/**
 * The subgraph's spans are made by hand through @opentelemetry/api rather than by module-patching
 * instrumentations: we choose every attribute (the undici and HTTP instrumentations would record
 * URLs with their query strings, where account numbers travel), and nothing depends on a loader
 * hook. With no SDK started the API hands out no-op spans and these helpers cost next to nothing.
 *
 * This folder imports nothing of ours, so any floor may use it.
 */
import { ROOT_CONTEXT, SpanStatusCode, context, isSpanContextValid, propagation, trace, type Context, type Span } from '@opentelemetry/api';

/** The tracer every span of the subgraph comes from. */
export const tracer = trace.getTracer('bank-subgraph');

let sdkStarted = false;
/**
 * Whether this process started the SDK (`startTracing`). Until it does every span is a no-op, and
 * the helpers on a request's path skip making them: even no-op spans and contexts cost throughput
 * on the hot paths (docs/benchmarks.md, "What shapes the code").
 */
export function tracingOn(): boolean {
  return sdkStarted;
}

/** Called by `startTracing` once the SDK records. */
export function markTracingStarted(): void {
  sdkStarted = true;
}

/** Incoming request headers (Node's lower-case map). */
export type Headers = Record<string, string | string[] | undefined>;

/** The context the caller sent (W3C `traceparent`/`tracestate`, or whatever OTEL_PROPAGATORS names). */
export function contextFromHeaders(headers: Headers): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

/** `trace_id` and `span_id` of the active span, for log lines; nothing when no span is recording. */
export function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (span === undefined) return {};
  const ids = span.spanContext();
  return isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : {};
}

/** A GraphQL error's `extensions.code` as an error type: the code when it is one, else UNKNOWN. */
export const codeOf = (code: unknown): string => (typeof code === 'string' ? code : 'UNKNOWN');

/** Marks a span failed with a short, safe description (an error code, never an error's message). */
export function markFailed(span: Span, errorType: string): void {
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
}

/**
 * Runs `work` inside `span` (its active context) and ends the span when it settles; a throw marks
 * it failed with `errorType(error)`.
 */
export async function inSpan<T>(
  span: Span,
  parent: Context,
  work: () => Promise<T>,
  errorType: (error: unknown) => string = errorName,
): Promise<T> {
  try {
    return await context.with(trace.setSpan(parent, span), work);
  } catch (error) {
    markFailed(span, errorType(error));
    throw error;
  } finally {
    span.end();
  }
}

/** An error's class name or code: what a trace may say about a failure without its message. */
export function errorName(error: unknown): string {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'unknown';
}

/** A URL fit for `url.full`: scheme, host and path; no user info, no query string, no fragment. */
export function urlWithoutQuery(raw: string): { full: string; host: string; port: number | undefined } {
  try {
    const url = new URL(raw);
    const port = url.port === '' ? undefined : Number(url.port);
    return { full: `${url.protocol}//${url.host}${url.pathname}`, host: url.hostname, port };
  } catch {
    return { full: 'unreadable', host: 'unreadable', port: undefined };
  }
}
