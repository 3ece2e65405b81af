import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, isSpanContextValid, trace, type Link } from '@opentelemetry/api';
import { contextFromHeaders, inSpan, tracer, tracingOn, type Headers } from './tracer.ts';

/**
 * A SERVER span for one collection-notification delivery, a child of the bank's `traceparent` when
 * it sends one, active while `handle` runs (so the store write and the publish are its children,
 * and its log lines carry its trace id). `recordWebhookReply` adds the reply code.
 */
export function traceWebhookDelivery<T>(
  request: { method: string; headers: Headers },
  route: string,
  handle: () => Promise<T>,
): Promise<T> {
  if (!tracingOn()) return handle();
  const parent = contextFromHeaders(request.headers);
  const span = tracer.startSpan(
    `${request.method} ${route}`,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route } },
    parent,
  );
  return inSpan(span, parent, handle);
}

/**
 * Records the reply on the active delivery span: the bank's response code (00 stored, 01 duplicate,
 * 02 rejected, 03 failure) and our reason; a `03` marks the span failed.
 */
export function recordWebhookReply(responseCode: string, reason: string, settlementId?: string): void {
  const span = trace.getSpan(context.active());
  if (span === undefined) return;
  span.setAttributes({
    'collection.response_code': responseCode,
    'collection.reason': reason,
    'http.response.status_code': 200,
    ...(settlementId === undefined ? {} : { 'collection.settlement_id': settlementId }),
  });
  if (responseCode === '03') span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
}

/** A CLIENT span around the durable write of one notification (`db.system.name`: sqlite or postgresql). */
export function traceStoreWrite<T extends { status: string }>(storeKind: string, write: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return write();
  const span = tracer.startSpan('INSERT collection_notifications', {
    kind: SpanKind.CLIENT,
    attributes: {
      'db.system.name': storeKind === 'postgres' ? 'postgresql' : storeKind,
      'db.operation.name': 'INSERT',
      'db.collection.name': 'collection_notifications',
    },
  });
  return inSpan(span, context.active(), async () => {
    const result = await write();
    span.setAttribute('collection.store_outcome', result.status);
    return result;
  });
}

/** A link to the active span (a delivery), for a publish that serves many; undefined when none records. */
export function linkToActiveSpan(): Link | undefined {
  const spanContext = trace.getSpan(context.active())?.spanContext();
  return spanContext !== undefined && isSpanContextValid(spanContext) ? { context: spanContext } : undefined;
}

/**
 * A PRODUCER span around publishing one message on a pub/sub topic (`messaging.system`: memory or
 * redis). One message may serve many deliveries: with one, the span is its child; with more, it
 * starts a trace of its own linked to each, as OpenTelemetry's messaging conventions do for a batch.
 */
export function tracePublish<T>(backend: string, topic: string, publish: () => Promise<T>, links: Link[] = []): Promise<T> {
  if (!tracingOn()) return publish();
  const parent = links.length === 1 ? trace.setSpanContext(ROOT_CONTEXT, links[0]!.context) : ROOT_CONTEXT;
  const span = tracer.startSpan(
    `send ${topic}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.system': backend, 'messaging.destination.name': topic, 'messaging.operation.type': 'send' },
      links: links.length > 1 ? links : [],
    },
    parent,
  );
  return inSpan(span, parent, publish);
}
