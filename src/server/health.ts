import type { FastifyInstance } from 'fastify';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';

/** A dependency that does not answer within this is reported down. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * `/health/live`: the process serves HTTP. `/health/ready`: it should get traffic: the store and
 * pub/sub answer and it is not draining (503 otherwise, with which part failed).
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  deps: { store: NotificationStore; pubsub: PubSub; isDraining: () => boolean },
): void {
  app.get('/health/live', async () => ({ status: 'ok' }));
  app.get('/health/ready', async (_request, reply) => {
    if (deps.isDraining()) return reply.code(503).send({ status: 'draining' });
    const [store, pubsub] = await Promise.all([probe(() => deps.store.ping()), probe(() => deps.pubsub.ping())]);
    const ready = store === 'ok' && pubsub === 'ok';
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', store, pubsub });
  });
}

async function probe(ping: () => Promise<void>): Promise<'ok' | 'down'> {
  const timeout = Promise.withResolvers<never>();
  const timer = setTimeout(() => timeout.reject(new Error('timed out')), PROBE_TIMEOUT_MS);
  try {
    await Promise.race([ping(), timeout.promise]);
    return 'ok';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}
