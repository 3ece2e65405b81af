import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onCleanup } from './cleanup.ts';
import { Inbox } from './wait.ts';

/** One exported span, flattened from OTLP/JSON; attribute values unwrapped. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  resource: Record<string, unknown>;
}

export const SpanKindNumber = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

export interface OtlpCollector {
  /** The base endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  endpoint: string;
  /** Every request body received on any path, raw, for searching exported bytes. */
  bodies: { path: string; contentType: string; body: Buffer }[];
  /** The spans of every OTLP/JSON body received on /v1/traces, as they arrive. */
  spans: Inbox<CollectedSpan>;
  /** Resolves with the first span matching `predicate`, waiting for exports up to `expireMs`. */
  waitForSpan(predicate: (span: CollectedSpan) => boolean, expireMs?: number): Promise<CollectedSpan>;
}

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function unwrap(attributes: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of attributes ?? []) {
    out[key] =
      value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue;
  }
  return out;
}

function flatten(body: any): CollectedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs: any) => {
    const resource = unwrap(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss: any) =>
      (ss.spans ?? []).map((span: any) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        attributes: unwrap(span.attributes),
        status: span.status ?? {},
        resource,
      })),
    );
  });
}

/** An in-process OTLP/HTTP collector on a free loopback port: keeps every body, answers 200. Closed after the test. */
export async function startOtlpCollector({
  register = onCleanup,
}: { register?: (stop: () => Promise<void>) => void } = {}): Promise<OtlpCollector> {
  const bodies: OtlpCollector['bodies'] = [];
  const spans = new Inbox<CollectedSpan>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = request.headers['content-type'] ?? '';
      bodies.push({ path: request.url ?? '', contentType, body });
      if (request.url === '/v1/traces' && contentType.includes('json')) spans.push(...flatten(JSON.parse(body.toString('utf8'))));
      response.writeHead(200, { 'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' });
      response.end(contentType.includes('json') ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  register(() => new Promise((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bodies,
    spans,
    waitForSpan: (predicate, expireMs = 10_000) => spans.first(predicate, expireMs),
  };
}

/** The chain of span ids from `span` up through its parents, as far as the collected spans reach. */
export function ancestry(spans: CollectedSpan[], span: CollectedSpan): string[] {
  const chain: string[] = [];
  let parent = span.parentSpanId;
  while (parent !== undefined) {
    chain.push(parent);
    parent = spans.find((candidate) => candidate.spanId === parent)?.parentSpanId;
  }
  return chain;
}
