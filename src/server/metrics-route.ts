import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics.ts';

/** `GET /metrics` in Prometheus text format, and the duration of every HTTP request served. */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics): void {
  // Callback style (not async) on every request's path: no promise per response.
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, never the raw URL: query strings may carry account numbers.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequestDuration.observe(
      { method: request.method, route, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
