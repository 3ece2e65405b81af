// Ours as a bench target: the subgraph exactly as `npm start` builds it, createApp(loadConfig(env)),
// from the environment the orchestrator gives (never a .env), in a process of its own on loopback.
// What it counts, it is asked for as any operator would ask: GET /metrics. Its bank is the in-process
// sandbox unless a stand-in is named, and then the bank clients are built over the stand-in and handed
// to createApp, as a test double would be: with BENCH_BANK_LIST=<n> (`banks` on a long list) a stand-in
// listing n banks in this process; with BENCH_COLLECTION_URL (the confirmation scenario) a process of
// its own for every area, so confirmation goes over real HTTP.
import { createApp, type AppOverrides } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createBankClients } from '../../src/upstream/index.ts';
import type { BankUrls } from '../../src/upstream/types.ts';
import { startBankListStandIn } from './bank-list.ts';
import { metric } from './graphql.ts';
import { hostForBench } from './host.ts';

const config = loadConfig({ ...process.env, HOST: '127.0.0.1' });
const closing: (() => Promise<void>)[] = [];
const overrides: AppOverrides = {};
/** The bank clients npm start would build, every area at `base`. */
function clientsAt(base: string, collection: string | undefined) {
  const [logger, metrics] = [createLogger(config.logLevel), createMetrics()];
  const urls: BankUrls = { base, gateway: base, billing: base, posting: base, wallet: base, collection };
  const bank = createBankClients({
    urls,
    credentials: config.upstream.credentials,
    collectionCredentials: config.webhook,
    timezone: config.upstream.timezone,
    timeoutMs: config.upstream.timeoutMs,
    logger,
    metrics,
  });
  Object.assign(overrides, { bank, logger, metrics });
  closing.push(() => bank.close());
}
if (process.env.BENCH_BANK_LIST) {
  const standIn = await startBankListStandIn(Number(process.env.BENCH_BANK_LIST));
  clientsAt(standIn.baseUrl, undefined);
  closing.push(() => standIn.close());
} else if (process.env.BENCH_COLLECTION_URL) {
  clientsAt(process.env.BENCH_COLLECTION_URL, process.env.BENCH_COLLECTION_URL);
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
