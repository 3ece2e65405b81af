import { streamIncomingTransfers } from './collection/incoming-transfers.ts';
import type { SubscriberConnection } from './collection/subscriber-queue.ts';
import type { NotificationLog } from './collection/notification-log.ts';
import type { CollectionNotificationRecord } from './domain/index.ts';
import type { Config } from './config.ts';
import { createBankBudget } from './limits/bank-budget.ts';
import type { BankListCache } from './loaders/bank-list-cache.ts';
import { createLoaders, type Loaders } from './loaders/index.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import type { PubSub } from './pubsub/types.ts';
import type { NotificationStore } from './store/types.ts';
import type { BankClients } from './upstream/types.ts';

/** The long-lived services an app wires together once; every request's context draws on them. */
export interface Services {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  bank: BankClients;
  bankList: BankListCache;
  store: NotificationStore;
  pubsub: PubSub;
  /** This replica's follower of the store's log: what live subscribers receive. */
  notificationLog: NotificationLog;
}

/** What every resolver receives, over HTTP and over WebSocket alike. */
export interface Context {
  /** The bank as this operation may use it: at most `MAX_OPERATION_COST` calls (the bank list's cache aside). */
  bank: BankClients;
  loaders: Loaders;
  store: NotificationStore;
  /** The `incomingTransfer` stream: replay after `afterSeq` when given, then live. */
  incomingTransfers(options: { accountNumber?: string | undefined; afterSeq?: number | undefined }): AsyncIterableIterator<CollectionNotificationRecord>;
}

/** How the operation's transport reaches its client, where it has a connection of its own (WebSocket). */
export interface OperationTransport {
  connection?: SubscriberConnection | undefined;
}

/** A fresh context, with its own loaders and bank-call budget, for one GraphQL operation. */
export function createContext(services: Services, transport: OperationTransport = {}): Context {
  const max = services.config.maxOperationCost;
  const { bank } = createBankBudget(services.bank, max, () =>
    services.logger.warn({ max }, 'operation reached its bank-call budget (MAX_OPERATION_COST): further calls refused'),
  );
  return {
    bank,
    // The loaders reach the bank through the budget too; the process-wide bank-list cache does not.
    loaders: createLoaders({ bank, bankList: services.bankList, store: services.store }),
    store: services.store,
    incomingTransfers: (options) => streamIncomingTransfers(services, { ...options, connection: transport.connection }),
  };
}
