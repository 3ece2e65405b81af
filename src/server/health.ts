import type { FastifyInstance } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { withinDeadline } from '../async/deadline.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';

/** The probes' paths, as orchestrators are configured with them (deploy/, compose.yaml). */
export const HEALTH_PATHS = { live: '/health/live', ready: '/health/ready' } as const;

/** A dependency that does not answer within this is reported down. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * `/health/live`: the process serves HTTP. `/health/ready`: it should get traffic: the store answers
 * and it is not draining (503 otherwise, with which part failed). Pub/sub is reported beside them
 * but never decides: every replica shares one Redis, so counting it would take them all out of the
 * load balancer at once, while without it live delivery only waits for the feed's timer.
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
    const store = await probe(() => deps.store.ping());
    const pubsub = deps.pubsub.connected ? 'ok' : 'down';
    return { status: store === 'ok' ? 'ready' : 'unavailable', store, pubsub } as const;
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

  new Gauge({
    name: 'pubsub_connected',
    help: 'Whether this replica reaches the others through pub/sub (1) or not (0, Redis unreachable: live delivery falls back to reading the store every second). Not part of readiness.',
    registers: [deps.registry],
    collect() {
      this.set(deps.pubsub.connected ? 1 : 0);
    },
  });

  app.get(HEALTH_PATHS.live, async () => ({ status: 'ok' }));
  app.get(HEALTH_PATHS.ready, async (_request, reply) => {
    const readiness = await check();
    ready.set(readiness.status === 'ready' ? 1 : 0);
    return reply.code(readiness.status === 'ready' ? 200 : 503).send(readiness);
  });
}

async function probe(ping: () => Promise<void>): Promise<'ok' | 'down'> {
  // Async, so a ping that throws at once is down like one that rejects.
  const answered = (async () => {
    await ping();
    return 'ok' as const;
  })().catch(() => 'down' as const);
  return withinDeadline(answered, PROBE_TIMEOUT_MS, 'down');
}
