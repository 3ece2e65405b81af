/**
 * Assembles one client per bank area over one shared call (one undici Agent, one circuit breaker
 * per area). Resolvers reach the bank only through what this returns.
 */
import type { BankCredentials, BankUrls, CollectionCredentials } from './types.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { createAccountClient } from './account.ts';
import { createBillingClient } from './billing.ts';
import { createCollectionClient } from './collection.ts';
import { createBankHttp } from './http.ts';
import { createPostingClient } from './posting.ts';
import { shareIdenticalReads } from './shared-reads.ts';
import { createTransactionClient } from './transaction.ts';
import type { BankClients } from './types.ts';
import { createWalletClient } from './wallet.ts';

export interface BankClientsOptions {
  urls: BankUrls;
  credentials: BankCredentials;
  /** What calls to the collection service carry: the webhook's `WEBHOOK_CLIENT_ID`, current secret and, in a rotation, the previous one. */
  collectionCredentials: CollectionCredentials;
  /** `BANK_TIMEZONE`: the zone of the bank's local times. */
  timezone: string;
  /** `BANK_TIMEOUT_MS`: the whole budget of one call (connect, headers, body). */
  timeoutMs: number;
  logger: Logger;
  metrics: Metrics;
}

/**
 * Creates every area's client, identical reads in flight sharing one call; `close()` ends the
 * breakers' timers and the keep-alive connections.
 */
export function createBankClients(options: BankClientsOptions): BankClients & { close(): Promise<void> } {
  const { urls, credentials, collectionCredentials, timezone, metrics } = options;
  const http = createBankHttp(options);
  const clients: BankClients = {
    account: createAccountClient(http, urls, credentials),
    transaction: createTransactionClient(http, urls, credentials),
    billing: createBillingClient(http, urls, credentials),
    wallet: createWalletClient(http, urls),
    posting: createPostingClient(http, urls, credentials),
    collection: createCollectionClient(http, urls, collectionCredentials, timezone),
  };
  const shared = shareIdenticalReads(clients, (area, operation) => metrics.bankSharedReads.inc({ area, operation }));
  return { ...shared, close: () => http.close() };
}
