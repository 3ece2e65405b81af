// Ours as a bench target: the subgraph exactly as `npm start` builds it, createApp(loadConfig(env)),
// from the environment the orchestrator gives (never a .env), in a process of its own on loopback.
// What it counts, it is asked for as any operator would ask: GET /metrics. With BENCH_BANK_LIST=<n>
// (`banks` on a long list) its bank is a stand-in listing n banks in this process, where the sandbox
// would be: the bank clients are built over it and handed to createApp, as a test double would be.
import { createApp, type AppOverrides } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createBankClients } from '../../src/upstream/index.ts';
import { startBankListStandIn } from './bank-list.ts';
import { metric } from './graphql.ts';
import { hostForBench } from './host.ts';

const config = loadConfig({ ...process.env, HOST: '127.0.0.1' });
const closing: (() => Promise<void>)[] = [];
const overrides: AppOverrides = {};
if (process.env.BENCH_BANK_LIST) {
  const standIn = await startBankListStandIn(Number(process.env.BENCH_BANK_LIST));
  const [logger, metrics] = [createLogger(config.logLevel), createMetrics()];
  const base = standIn.baseUrl;
  const bank = createBankClients({ urls: { base, gateway: base, billing: base, posting: base, wallet: base }, credentials: config.upstream.credentials, collectionCredentials: config.webhook, timezone: config.upstream.timezone, timeoutMs: config.upstream.timeoutMs, logger, metrics });
  Object.assign(overrides, { bank, logger, metrics });
  closing.push(() => bank.close(), () => standIn.close());
}
const app = await createApp(config, overrides);
let baseUrl = '';
await hostForBench({
  // PORT reached the app through its config.
  listen: async () => (baseUrl = (await app.listen()).replace('localhost', '127.0.0.1').replace(/\/graphql$/, '')),
  subscriptions: () => metric(baseUrl, 'graphql_active_subscriptions'),
  async close() {
    await app.close();
    for (const close of closing) await close();
  },
});
