import type { Authenticator } from './auth/authenticator.ts';
import { createAccountScope, scopedStore } from './auth/account-scope.ts';
import { visibleAccounts, type Caller } from './auth/caller.ts';
import type { AuthContext } from './auth/enforce.ts';
import { createConfirmationDecisions, type ConfirmationDecisions } from './collection/confirmation-decisions.ts';
import type { Confirmer } from './collection/confirmation.ts';
import type { ConfirmedFeed } from './collection/confirmed-feed.ts';
import { streamIncomingTransfers } from './collection/incoming-transfers.ts';
import type { SubscriberConnection } from './collection/subscriber-queue.ts';
import type { NotificationFeed } from './collection/notification-feed.ts';
import type { QuarantineKeeper } from './collection/quarantine.ts';
import { createReconciliation, type Reconciliation } from './collection/reconciliation.ts';
import type { CollectionNotificationRecord, LogPosition } from './domain/index.ts';
import { badUserInput } from './errors.ts';
import { createBankBudget } from './limits/bank-budget.ts';
import { createLoaders, type Loaders } from './loaders/index.ts';
import type { ReferenceData } from './loaders/reference-data.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import type { PubSub } from './pubsub/types.ts';
import type { CollectionStore, NotificationStore, QuarantineStore } from './store/types.ts';
import type { BankClients } from './upstream/types.ts';

/** The long-lived services an app wires together once; every request's context draws on them. */
export interface Services extends ContextDeps {
  pubsub: PubSub;
  /** Who calls: from the Authorization header or graphql-ws connectionParams to a Caller. */
  authenticator: Authenticator;
  /** Where the webhook keeps what it refuses, or takes for a conflict. */
  quarantineKeeper: QuarantineKeeper;
  /** This replica's confirmer, told of each notification stored PENDING; undefined when confirmation is off. */
  confirmer: Pick<Confirmer, 'wake'> | undefined;
}

/** What an operation's context is made from. */
export interface ContextDeps {
  /** `MAX_OPERATION_COST`: the most bank calls one operation may make. */
  maxOperationCost: number;
  /** `BANK_TIMEZONE`: where a bank day begins, for collection summaries. */
  bankTimezone: string;
  logger: Logger;
  metrics: Metrics;
  bank: BankClients;
  /** The bank list and the bill categories, cached process-wide. */
  referenceData: ReferenceData;
  store: CollectionStore;
  /** This replica's follower of the store's log: what live subscribers receive. */
  notificationFeed: NotificationFeed;
  /** The follower of the log of confirmations: what `confirmed` subscribers receive; undefined when confirmation is off. */
  confirmedFeed: ConfirmedFeed | undefined;
  /** `CONFIRMATION_NOT_FOUND_RECHECK_S` in ms, for an operator's RECHECK. */
  notFoundRecheckMs: number;
}

/** What every resolver receives, over HTTP and over WebSocket alike. */
export interface Context extends AuthContext {
  /** The bank as this operation may use it: at most `MAX_OPERATION_COST` calls (the cached reference data aside). */
  bank: BankClients;
  loaders: Loaders;
  store: NotificationStore;
  /** The webhook's quarantine, for operators (its fields need `collections:review`). */
  quarantine: QuarantineStore;
  /** The IANA zone of the bank's calendar (`BANK_TIMEZONE`): where summaries cut their days. */
  bankTimezone: string;
  /** Transfers checked with the bank on demand, and what never arrived recovered (its fields need `collections:reconcile`). */
  reconciliation: Reconciliation;
  /** Operators' decisions of a notification's confirmation (`decideConfirmation`, under `collections:reconcile`). */
  confirmationDecisions: ConfirmationDecisions;
  /**
   * The `incomingTransfer` stream: replay after the `after` position when given, then live; with
   * `confirmed`, CONFIRMED notifications only (BAD_USER_INPUT where confirmation is off).
   */
  incomingTransfers(options: {
    accountNumber?: string | undefined;
    after?: LogPosition | undefined;
    confirmed?: boolean | undefined;
  }): AsyncIterableIterator<CollectionNotificationRecord>;
}

/** Who calls, and how the operation's transport reaches its client. */
export interface OperationTransport {
  caller: Caller;
  /** The client's own connection, where it has one (WebSocket). */
  connection?: SubscriberConnection | undefined;
  /** See AuthContext: true where no connection ends the operation's streams when the token ends. */
  streamsEndWithToken?: boolean | undefined;
}

/** A fresh context, with its own loaders and bank-call budget, for one GraphQL operation. */
export function createContext(services: ContextDeps, transport: OperationTransport): Context {
  const max = services.maxOperationCost;
  const { bank } = createBankBudget(services.bank, max, () =>
    services.logger.warn({ max }, 'operation reached its bank-call budget (MAX_OPERATION_COST): further calls refused'),
  );
  // Every read of money records goes through the caller's accounts: lists, totals, by id, streams.
  // Counted only where the caller named an account it may not see; a read by id counts nothing.
  const scope = createAccountScope(visibleAccounts(transport.caller), () =>
    services.metrics.authorizationRefusals.inc({ reason: 'forbidden_account' }),
  );
  const store = scopedStore(services.store, scope);
  const operator = transport.caller.kind === 'verified' ? (transport.caller.subject ?? null) : null;
  return {
    caller: transport.caller,
    streamsEndWithToken: transport.streamsEndWithToken,
    bank,
    // The loaders reach the bank through the budget too; the process-wide reference data does not.
    loaders: createLoaders({ bank, referenceData: services.referenceData, store }),
    store,
    quarantine: services.store.quarantine,
    bankTimezone: services.bankTimezone,
    // Operators' reads and imports: every account, the bank checked within this operation's budget;
    // a REPUSH rides on the price of the id it recovers.
    reconciliation: createReconciliation({
      bank,
      resend: services.bank.collection,
      store: services.store,
      notificationFeed: services.notificationFeed,
      onConfirmed: () => services.confirmedFeed?.decided(),
      timezone: services.bankTimezone,
      metrics: services.metrics,
      logger: services.logger,
      operator,
    }),
    confirmationDecisions: createConfirmationDecisions({
      store: services.store,
      bank: bank.collection,
      metrics: services.metrics,
      logger: services.logger,
      onConfirmed: () => services.confirmedFeed?.decided(),
      notFoundRecheckMs: services.notFoundRecheckMs,
      operator,
    }),
    incomingTransfers({ accountNumber, after, confirmed = false }) {
      // Refused before anything starts: with nothing ever confirmed, nothing would arrive on it.
      if (confirmed && services.confirmedFeed === undefined) {
        throw badUserInput(
          'confirmed',
          'confirmation with the bank is off here (COLLECTION_CONFIRMATION=off), so no transfer would ever arrive on a confirmed stream.',
        );
      }
      return streamIncomingTransfers(services, { ...scope.filter(accountNumber), after, confirmed, connection: transport.connection });
    },
  };
}
