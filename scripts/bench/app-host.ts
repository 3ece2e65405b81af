// Ours as a bench target: the subgraph exactly as `npm start` builds it, createApp(loadConfig(env)),
// from the environment the orchestrator gives (never a .env), in a process of its own on loopback.
// What it counts, it is asked for as any operator would ask: GET /metrics.
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { metric } from './graphql.ts';
import { hostForBench } from './host.ts';

const app = await createApp(loadConfig({ ...process.env, HOST: '127.0.0.1' }));
let baseUrl = '';
await hostForBench({
  // PORT reached the app through its config.
  listen: async () => (baseUrl = (await app.listen()).replace('localhost', '127.0.0.1').replace(/\/graphql$/, '')),
  subscriptions: () => metric(baseUrl, 'graphql_active_subscriptions'),
  close: () => app.close(),
});
