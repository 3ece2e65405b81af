// Ours as a bench target: the subgraph exactly as `npm start` builds it, createApp(loadConfig(env)),
// from the environment the orchestrator gives (never a .env), in a process of its own on loopback.
// What it counts, it is asked for as any operator would ask: GET /metrics.
// With BENCH_COLLECTION_URL (the confirmation scenario), its bank clients are the ones npm start
// builds, every area on that stand-in: confirmation goes over real HTTP to a process of its own.
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createBankClients } from '../../src/upstream/index.ts';
import { metric } from './graphql.ts';
import { hostForBench } from './host.ts';

const config = loadConfig({ ...process.env, HOST: '127.0.0.1' });
const standIn = process.env.BENCH_COLLECTION_URL;
const metrics = createMetrics();
const logger = createLogger(config.logLevel);
const bank =
  standIn === undefined
    ? undefined
    : createBankClients({
        urls: { base: standIn, gateway: standIn, billing: standIn, posting: standIn, wallet: standIn, collection: standIn },
        credentials: config.upstream.credentials,
        collectionCredentials: config.webhook,
        timezone: config.upstream.timezone,
        timeoutMs: config.upstream.timeoutMs,
        logger,
        metrics,
      });
const app = await createApp(config, bank ? { bank, metrics, logger } : {});
let baseUrl = '';
await hostForBench({
  // PORT reached the app through its config.
  listen: async () => (baseUrl = (await app.listen()).replace('localhost', '127.0.0.1').replace(/\/graphql$/, '')),
  subscriptions: () => metric(baseUrl, 'graphql_active_subscriptions'),
  close: () => app.close(),
});
