import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { startTracing, tracingRequested } from './sdk.ts';
import { tracingOn } from './tracer.ts';
import { traceStoreWrite, traceWebhookDelivery } from './webhook.ts';

describe('tracingRequested', () => {
  it.each([
    ['nothing set', {}, false],
    ['only a service name and protocol', { OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, false],
    ['an empty endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false],
    ['an endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    ['a traces endpoint', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    ['the otlp exporter named, default endpoint', { OTEL_TRACES_EXPORTER: 'otlp' }, true],
    ['the console exporter', { OTEL_TRACES_EXPORTER: 'console' }, true],
    ['exporter none, endpoint set', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    ['an unknown exporter only', { OTEL_TRACES_EXPORTER: 'jaegerish' }, false],
    ['the SDK disabled', { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
  ])('%s → %s', (_name, env, expected) => {
    expect(tracingRequested(env)).toBe(expected);
  });

  it('loads and starts nothing when not requested', async () => {
    expect(await startTracing({ OTEL_SERVICE_NAME: 'x' })).toBeUndefined();
    expect(tracingOn()).toBe(false);
  });

  it('makes no span, not even a no-op one, on a request path while tracing is off', async () => {
    const activeDuring = await traceWebhookDelivery({ method: 'POST', headers: {} }, '/webhooks/collection', async () =>
      traceStoreWrite('sqlite', async () => ({ status: 'inserted', span: trace.getSpan(context.active()) })),
    );
    expect(activeDuring.span).toBeUndefined();
  });
});
