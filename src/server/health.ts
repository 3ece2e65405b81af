import type { FastifyInstance } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
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
  deps: {
    store: NotificationStore;
    pubsub: PubSub;
    isDraining: () => boolean;
    /** Where `bank_subgraph_ready` is exported. */
    registry: Registry;
  },
): void {
  const check = async () => {
    if (deps.isDraining()) return { status: 'draining' } as const;
    const [store, pubsub] = await Promise.all([probe(() => deps.store.ping()), probe(() => deps.pubsub.ping())]);
    return { status: store === 'ok' && pubsub === 'ok' ? 'ready' : 'unavailable', store, pubsub } as const;
  };
  const ready = new Gauge({
    name: 'bank_subgraph_ready',
    help: '1 when this replica should get traffic (what /health/ready answers), 0 otherwise; probed afresh at each scrape.',
    registers: [deps.registry],
    // Prometheus reads /metrics, not /health/ready: a value from the last probe could be hours old.
    async collect() {
      this.set((await check()).status === 'ready' ? 1 : 0);
    },
  });

  app.get('/health/live', async () => ({ status: 'ok' }));
  app.get('/health/ready', async (_request, reply) => {
    const readiness = await check();
    ready.set(readiness.status === 'ready' ? 1 : 0);
    return reply.code(readiness.status === 'ready' ? 200 : 503).send(readiness);
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
