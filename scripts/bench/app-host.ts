// The project as a bench target: the subgraph built by createApp from the environment the orchestrator
// gives (never a .env: what is measured is what the bench says), its store's batch writes timed, served on
// a loopback port in its own process, as each floor is.
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createNotificationStore } from '../../src/store/index.ts';
import { startTracing } from '../../src/telemetry/sdk.ts';
import { hostForBench } from './host.ts';
import { timeBatches } from './batch-times.ts';

const config = loadConfig({ ...process.env, HOST: '127.0.0.1' });
// As main.ts does: started only when the OTEL_* variables configure an exporter (--tracing).
const tracing = await startTracing(process.env);
// Built here only to time its batch writes; createApp then uses it as is (and leaves closing it to us).
const batches = timeBatches();
const store = await createNotificationStore(config.storeUrl.reveal(), { logger: createLogger('silent'), onBatch: batches.onBatch });
// Replicas of one run share a channel prefix no other user of the Redis server has.
// The stalled-resumes run lengthens the WebSocket keep-alive, so it can measure its stalled clients
// before the keep-alive ends them (scripts/bench/stalled-resumes.ts).
const keepAliveMs = Number(process.env.BENCH_KEEPALIVE_MS) || undefined;
// The app's own metrics, handed in so that live subscriptions are read here without a scrape.
const metrics = createMetrics();
const app = await createApp(config, {
  metrics,
  store,
  ...(keepAliveMs ? { subscriptions: { keepAliveMs } } : {}),
});

await hostForBench({
  // PORT reached the app through its config already.
  listen: async () => (await app.listen()).replace(/\/graphql$/, ''),
  async subscriptions() {
    return (await metrics.activeSubscriptions.get()).values[0]?.value ?? 0;
  },
  batches,
  async close() {
    await app.close();
    await store.close();
    await tracing?.shutdown();
  },
});

