import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics.ts';

/** `GET /metrics` in Prometheus text format. */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics): void {
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
