import { createAuthenticator } from './auth/authenticator.ts';
import { describeUrl, type Config } from './config/index.ts';
import { startConfirmer, type Confirmer } from './collection/confirmation.ts';
import { startConfirmedFeed, type ConfirmedFeed } from './collection/confirmed-feed.ts';
import { startNotificationFeed } from './collection/notification-feed.ts';
import { createQuarantineKeeper } from './collection/quarantine.ts';
import { WEBHOOK_PATHS } from './collection/webhook-route.ts';
import type { Services } from './context.ts';
import { createReferenceData } from './loaders/reference-data.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { channelPrefixOf, createPubSub } from './pubsub/index.ts';
import type { PubSub } from './pubsub/types.ts';
import { startBankSandbox, type BankSandbox } from './sandbox/index.ts';
import { createSubgraphSchema } from './schema.ts';
import { createHttpServer } from './server/index.ts';
import { createNotificationStore } from './store/index.ts';
import { exportConfirmationBacklog, exportQuarantineUnreviewed, exportStoreSize } from './store/size-metrics.ts';
import type { CollectionStore } from './store/types.ts';
import { createBankClients } from './upstream/index.ts';
import type { BankClients, BankUrls } from './upstream/types.ts';

/** Test doubles: anything given is used instead of what the config would build. */
export interface AppOverrides {
  logger?: Logger;
  bank?: BankClients;
  store?: CollectionStore;
  pubsub?: PubSub;
}

export interface App {
  /** Listens on the configured port (0 picks a free one); resolves to the GraphQL URL. */
  listen(): Promise<string>;
  /**
   * Drains and closes everything the app started, in order. Safe to call twice. Rejects, once
   * everything has been closed, when a step failed (the drain ran out of time, a store would not close).
   */
  close(): Promise<void>;
}

/**
 * Builds the whole subgraph from a config: the bank (the in-process sandbox or the live URLs), the
 * store, pub/sub, schema and HTTP server. Serves nothing until `listen()`; can be built many times
 * in one process (tests), each with its own port, metrics and state.
 */
export async function createApp(config: Config, overrides: AppOverrides = {}): Promise<App> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const metrics = createMetrics();
  // Everything started so far, closed in reverse if a later step fails or on close(). A failed step
  // does not stop the next: each failure is logged, and the first is the result.
  const started: (() => Promise<void>)[] = [];
  const closeStarted = async (): Promise<unknown[]> => {
    const failures: unknown[] = [];
    for (const close of started.reverse()) {
      await close().catch((error: unknown) => {
        failures.push(error);
        logger.error({ err: error }, `error while closing: ${error instanceof Error ? error.message : String(error)}`);
      });
    }
    return failures;
  };

  try {
    const { bank, sandbox, description } = await connectBank(config, overrides, { logger, metrics, started });
    const auth = describeAuth(config);
    logger.info(
      { bank: sandbox ? 'sandbox' : 'live', store: describeUrl(config.storeUrl), pubsub: describeUrl(config.pubsubUrl), auth: auth.mode },
      `bank: ${description}; store: ${describeUrl(config.storeUrl)}; pub/sub: ${describeUrl(config.pubsubUrl)}; authorization: ${auth.description}`,
    );
    // A door the configuration opens on purpose, said once at start beside what runs.
    for (const warning of config.warnings) logger.warn(warning);
    const authenticator = await createAuthenticator(config.auth);

    const store =
      overrides.store ?? (await createNotificationStore(config.storeUrl.reveal(), { logger, batchSizes: metrics.storeBatchSize }));
    if (!overrides.store) started.push(() => store.close());
    exportStoreSize(metrics.registry, store);
    exportQuarantineUnreviewed(metrics.registry, store.quarantine);
    exportConfirmationBacklog(metrics.registry, store.confirmations);
    const pubsub =
      overrides.pubsub ?? (await createPubSub(config.pubsubUrl.reveal(), { logger, channelPrefix: channelPrefixOf(store.identity) }));
    if (!overrides.pubsub) started.push(() => pubsub.close());

    const { bankListTtlMs: freshMs, bankListStaleMs: staleMs } = config.upstream;
    const referenceData = createReferenceData(bank, { freshMs, staleMs, logger, metrics });
    // One follower per replica, closed after the server (its subscriptions end first) and before
    // the store and pub/sub it reads.
    const notificationFeed = await startNotificationFeed({ store, pubsub, metrics, logger });
    started.push(() => notificationFeed.close());
    // Drained after the server (the webhook's last replies) and before the store it writes to.
    const bounds = { maxRows: config.quarantineMaxRows, maxBytes: config.quarantineMaxBytes };
    const quarantineKeeper = createQuarantineKeeper({ store, bounds, metrics, logger });
    started.push(() => quarantineKeeper.drain());
    // Closed after the server (its webhook writes done, its confirmed subscribers ended) and before
    // the store and pub/sub: the confirmer first, so its last answers are still announced.
    const confirmation = config.confirmation.enabled
      ? await startConfirmation(config, { store, pubsub, bank, metrics, logger })
      : undefined;
    if (confirmation)
      started.push(
        () => confirmation.confirmedFeed.close(),
        () => confirmation.confirmer.close(),
      );
    const services: Services = {
      maxOperationCost: config.maxOperationCost,
      bankTimezone: config.upstream.timezone,
      logger,
      metrics,
      bank,
      referenceData,
      store,
      pubsub,
      notificationFeed,
      authenticator,
      quarantineKeeper,
      confirmer: confirmation?.confirmer,
      confirmedFeed: confirmation?.confirmedFeed,
      notFoundRecheckMs: config.confirmation.notFoundRecheckMs,
    };
    const catalogueMaxAgeS = Math.floor(config.upstream.bankListTtlMs / 1000);
    // Guarded as it is built: its @authenticated / @requiresScopes enforced by its own resolvers, for every transport.
    const schema = createSubgraphSchema({
      catalogueMaxAgeS,
      publishAccessDirectives: config.publishAccessDirectives,
      onRefusal: (reason) => metrics.authorizationRefusals.inc({ reason }),
    });
    const server = await createHttpServer(services, schema, {
      introspection: config.sandboxRules,
      routerSecret: config.routerSecret,
      corsOrigins: config.corsOrigins,
      publicMaxAgeS: catalogueMaxAgeS,
      trustProxy: config.trustProxy,
      webhook: {
        credentials: config.webhook,
        allowedSources: config.webhookAllowedSources,
        timezone: config.upstream.timezone,
        maxBodyBytes: config.webhookMaxBodyBytes,
      },
      subscriptionKeepAliveMs: config.subscriptionKeepAliveMs,
      callbackUrls: config.callbackUrls,
      webhookPort: config.webhookPort,
      sandboxBank: sandbox && config.sandboxRules ? { collectionConsoleUrl: sandbox.collection.consoleUrl } : undefined,
    });
    // The server drains first: in-flight webhook writes finish before the store closes.
    started.push(() => server.close());

    let closing: Promise<void> | undefined;
    return {
      async listen() {
        const { graphqlUrl: url, webhookUrl } = await server.listen(config.port, config.host);
        // The sandbox bank started before there was a webhook to deliver to.
        sandbox?.collection.deliverTo(localWebhookUrl(webhookUrl ?? url));
        if (webhookUrl !== undefined)
          logger.info({ webhookUrl }, `collection webhook and health listening at ${webhookUrl} (WEBHOOK_PORT)`);
        logger.info({ url }, `bank subgraph listening at ${url}`);
        return url;
      },
      close: () =>
        (closing ??= closeStarted().then((failures) => {
          if (failures.length > 0) throw failures[0];
        })),
    };
  } catch (error) {
    await closeStarted();
    throw error;
  }
}

/** Confirmation with the bank: the confirmed feed, and the confirmer that wakes it. */
async function startConfirmation(
  config: Config,
  deps: { store: CollectionStore; pubsub: PubSub; bank: BankClients; metrics: Metrics; logger: Logger },
): Promise<{ confirmer: Confirmer; confirmedFeed: ConfirmedFeed }> {
  const { store, pubsub, bank, metrics, logger } = deps;
  const confirmedFeed = await startConfirmedFeed({ store, pubsub, logger });
  const confirmer = startConfirmer(
    { confirmations: store.confirmations, bank: bank.collection, metrics, logger, onDecided: () => confirmedFeed.decided() },
    {
      concurrency: config.confirmation.concurrency,
      askMs: config.upstream.timeoutMs,
      notFoundRecheckMs: config.confirmation.notFoundRecheckMs,
    },
  );
  return { confirmer, confirmedFeed };
}

/** The webhook on this machine, as the in-process sandbox bank reaches it (a wildcard bind over loopback). */
function localWebhookUrl(listening: string): string {
  const url = new URL(WEBHOOK_PATHS[0], listening);
  if (url.hostname === 'localhost') url.hostname = '127.0.0.1';
  return url.href;
}

/** Authorization as the first log line tells it: on (with whose tokens), or off, and why that is allowed. */
function describeAuth(config: Config): { mode: 'jwt' | 'off'; description: string } {
  if (config.auth === undefined) {
    return { mode: 'off', description: 'OFF (no AUTH_JWKS_URL; every caller reads everything: never expose this outside development)' };
  }
  const { issuer, audience } = config.auth;
  // The sandbox rules allow AUTH_JWKS_URL alone: then any issuer the JWKS's keys sign for is taken.
  const from = issuer === undefined ? 'signed by a key of AUTH_JWKS_URL, any issuer (AUTH_ISSUER unset)' : `from ${issuer}`;
  return { mode: 'jwt', description: `JWT ${from}${audience === undefined ? '' : ` for ${audience}`}` };
}

/**
 * The bank clients: the ones given in `overrides`, or clients of the in-process sandbox (started
 * here) or of the live URLs. Whatever it starts is pushed onto `started` for closing.
 */
async function connectBank(
  config: Config,
  overrides: AppOverrides,
  { logger, metrics, started }: { logger: Logger; metrics: Metrics; started: (() => Promise<void>)[] },
): Promise<{ bank: BankClients; sandbox: BankSandbox | undefined; description: string }> {
  if (overrides.bank) return { bank: overrides.bank, sandbox: undefined, description: 'provided' };
  let sandbox: BankSandbox | undefined;
  let urls: BankUrls;
  let description: string;
  if (config.upstream.mode === 'sandbox') {
    const running = await startBankSandbox({
      logger: logger.child({ component: 'sandbox' }),
      // The bank signs with, and checks ops 15-17 against, the pair the partner configured.
      partner: config.webhook,
      timezone: config.upstream.timezone,
    });
    started.push(() => running.close());
    sandbox = running;
    urls = running.urls;
    description = 'in-process sandbox (demo data, no credentials needed)';
  } else {
    urls = config.upstream.urls;
    description = `live at ${new URL(urls.base).host}`;
  }
  const { credentials, timeoutMs, timezone } = config.upstream;
  const clients = createBankClients({ urls, credentials, collectionCredentials: config.webhook, timezone, timeoutMs, logger, metrics });
  started.push(() => clients.close());
  return { bank: clients, sandbox, description };
}
