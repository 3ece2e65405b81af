// Reconciliation with the bank: a transfer checked with the bank's collection service on demand (ops
// 15/16) and set beside what the store holds, and a list of them checked a few at a time, each one the
// bank holds that never reached the store recovered: sent again through the webhook (op 17), or the
// bank's own record stored as the money record, exactly once, and published like any delivery.
import pMap from 'p-map';
import type { GraphQLError } from 'graphql';
import {
  compareWithBank,
  reconcileReport,
  type BankTransactionCheckRecord,
  type BankTransactionRecord,
  type CollectionNotificationRecord,
  type Comparison,
  type NewCollectionNotification,
  type ReconcileItemRecord,
  type ReconcileReportRecord,
  type RecoverMode,
  type TransferId,
  type TransferIdKind,
} from '../domain/index.ts';
import { UnstorableNotificationError } from '../store/batch.ts';
import { formatAmount, parseDecimal } from '../store/decimal.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { CollectionStore } from '../store/types.ts';
import type { CollectionClient } from '../upstream/types.ts';
import type { NotificationFeed } from './notification-feed.ts';
import { parseNotification } from './notification.ts';

/** Ids of one list asked of the bank at once: a few, so a list of 200 never lands on the bank together. */
export const RECONCILE_CONCURRENCY = 4;
/** The most quarantined deliveries a check lists: a transfer's refused deliveries, not a flood of them. */
export const MAX_QUARANTINED_LISTED = 100;

export interface ReconciliationDeps {
  /** The operation's bank: every check within its budget; its collection client is reached only when used. */
  bank: { readonly collection: Pick<CollectionClient, 'verifyBySessionId' | 'verifyBySettlementId'> };
  /**
   * Op 17 outside the operation's budget: a `REPUSH` is part of the price of the id it recovers (one
   * bank call an id checked), so a list the estimate let through is never cut short half-way.
   */
  resend: Pick<CollectionClient, 'repush'>;
  /** The whole store: operators reconcile every account. */
  store: Pick<CollectionStore, 'getMany' | 'findBySessionId' | 'insert' | 'quarantine'>;
  /** Told of an import's commit, as of a delivery's: every replica's subscribers get it. */
  notificationFeed: Pick<NotificationFeed, 'announce'>;
  /** `BANK_TIMEZONE`: how an imported record's bank time is read, as the webhook reads it. */
  timezone: string;
  metrics: Metrics;
  logger: Logger;
  /** Who asked (their token's `sub`), for the log of what was recovered; null where authorization is off. */
  operator: string | null;
}

/** One list of `reconcileCollections`: the ids of one kind, as given. */
export interface TransferIds {
  kind: TransferIdKind;
  ids: readonly string[];
}

/** Reconciliation for one operation. */
export interface Reconciliation {
  /** Asks the bank about one transfer and sets its answer beside the store's; a bank failure rejects (UPSTREAM_*). */
  check(asked: TransferId): Promise<BankTransactionCheckRecord>;
  /** Checks each distinct id (a few at a time) and recovers what is MISSING_HERE as `recover` says; never rejects for one id. */
  reconcile(list: TransferIds, recover: RecoverMode): Promise<ReconcileReportRecord>;
}

/** Reconciliation over `deps`, for one GraphQL operation. */
export function createReconciliation(deps: ReconciliationDeps): Reconciliation {
  const { bank, store, metrics, logger } = deps;

  const askBank = ({ kind, id }: TransferId) =>
    kind === 'sessionId' ? bank.collection.verifyBySessionId(id) : bank.collection.verifyBySettlementId(id);

  /** The money record of the transfer: the bank's settlementId's, else the first with the session id asked by. */
  async function storedOf(asked: TransferId, atBank: BankTransactionRecord | null): Promise<CollectionNotificationRecord | null> {
    const settlementId = atBank?.settlementId ?? (asked.kind === 'settlementId' ? asked.id : undefined);
    const [bySettlement] = settlementId === undefined ? [null] : await store.getMany([settlementId]);
    if (bySettlement || asked.kind !== 'sessionId') return bySettlement ?? null;
    return store.findBySessionId(asked.id);
  }

  const count = (verdict: string) => metrics.reconciliationChecks.inc({ verdict });

  async function reconcileOne(asked: TransferId, recover: RecoverMode): Promise<ReconcileItemRecord> {
    let atBank: BankTransactionRecord | null;
    let stored: CollectionNotificationRecord | null;
    try {
      atBank = await askBank(asked);
      stored = await storedOf(asked, atBank);
    } catch (error) {
      count('FAILED');
      return {
        id: asked.id,
        verdict: null,
        differences: [],
        recovered: false,
        error: describe(error, logger, asked, 'the store could not be read; check this id again.'),
      };
    }
    const comparison = compareWithBank(atBank, stored);
    count(comparison.verdict);
    const item = (outcome: Comparison, recovered = false, error: string | null = null): ReconcileItemRecord => ({
      id: asked.id,
      ...outcome,
      recovered,
      error,
    });
    if (comparison.verdict !== 'MISSING_HERE' || recover === 'NONE' || atBank === null) return item(comparison);
    const recovery = recover === 'REPUSH' ? await repush(atBank) : await importRecord(atBank);
    metrics.reconciliationRecoveries.inc({ mode: recover, outcome: recovery.recovered ? 'recovered' : 'not_recovered' });
    return item(recovery.comparison ?? comparison, recovery.recovered, recovery.error);
  }

  /** Op 17: the bank sends the notification again, through the webhook and all its rules. */
  async function repush(atBank: BankTransactionRecord): Promise<Recovery> {
    const ids = { settlementId: atBank.settlementId, sessionId: atBank.sessionId };
    try {
      const answer = await deps.resend.repush(ids);
      if (answer.queued) {
        logger.info({ ...ids, operator: deps.operator }, 'reconciliation: the bank queued a missing transfer to be delivered again');
        return { recovered: true, error: null };
      }
      const said = `responseCode ${answer.responseCode}${answer.responseMessage === null ? '' : `: ${answer.responseMessage}`}`;
      return { recovered: false, error: `UPSTREAM_REJECTED: the bank did not queue it to be delivered again (${said}).` };
    } catch (error) {
      return {
        recovered: false,
        error: describe(
          error,
          logger,
          { kind: 'settlementId', id: atBank.settlementId },
          'the request to send it again failed; check this id again.',
        ),
      };
    }
  }

  /** The bank's record stored as the money record, once by its settlementId; a transfer stored meanwhile is compared instead. */
  async function importRecord(atBank: BankTransactionRecord): Promise<Recovery> {
    const { settlementId } = atBank;
    const notification = importedNotification(atBank, new Date(), deps.timezone);
    if (typeof notification === 'string') {
      return {
        recovered: false,
        error: `UPSTREAM_INVALID_RESPONSE: the bank's record cannot be stored as a notification (${notification}); nothing was stored.`,
      };
    }
    let result;
    try {
      result = await store.insert(notification);
    } catch (error) {
      const refused = error instanceof UnstorableNotificationError;
      logger.error({ err: error, settlementId }, "reconciliation: the bank's record of a missing transfer could not be stored");
      return {
        recovered: false,
        error: `INTERNAL_SERVER_ERROR: the store ${refused ? "refused the bank's record" : 'could not be written'}; nothing was stored.`,
      };
    }
    if (result.status === 'duplicate') {
      // A delivery, or another import, stored it since the bank was asked: compared with that, never stored twice.
      const [stored] = await store.getMany([settlementId]).catch(() => [null]);
      if (stored) return { recovered: false, error: null, comparison: compareWithBank(atBank, stored) };
      return { recovered: false, error: 'INTERNAL_SERVER_ERROR: it was stored meanwhile and could not be read back; check this id again.' };
    }
    deps.notificationFeed.announce(result.notification.position, result.settled);
    const { sessionId, accountNumber, transactionAmount } = notification;
    logger.warn(
      { settlementId, sessionId, accountNumber, transactionAmount, operator: deps.operator },
      "reconciliation: a missing transfer stored from the bank's record (source RECONCILED)",
    );
    return { recovered: true, error: null };
  }

  return {
    async check(asked) {
      const atBank = await askBank(asked);
      const stored = await storedOf(asked, atBank);
      const comparison = compareWithBank(atBank, stored);
      count(comparison.verdict);
      const ids = (field: TransferIdKind) => distinct([asked.kind === field ? asked.id : '', atBank?.[field] ?? '', stored?.[field] ?? '']);
      const quarantined = await store.quarantine.withTransferIds({
        settlementIds: ids('settlementId'),
        sessionIds: ids('sessionId'),
        limit: MAX_QUARANTINED_LISTED,
      });
      return { ...comparison, atBank, stored, quarantined };
    },
    async reconcile({ kind, ids }, recover) {
      const items = await pMap(distinct(ids), (id) => reconcileOne({ kind, id }, recover), { concurrency: RECONCILE_CONCURRENCY });
      return reconcileReport(items);
    },
  };
}

/** What a recovery came to; `comparison` when the transfer turned out stored meanwhile. */
interface Recovery {
  recovered: boolean;
  error: string | null;
  comparison?: Comparison | undefined;
}

/**
 * The bank's record as a notification to store, read by the webhook's own rules from the fields
 * the bank answered (op 14's names, amounts as their exact text), or why those rules refuse it. Its
 * amounts are written as money is (the bank's `1500.0` as `1500.00`, never rounded) and its raw body
 * is the bank's answer as received; it is the bank's word, so confirmed as it is stored.
 */
export function importedNotification(atBank: BankTransactionRecord, now: Date, timezone: string): NewCollectionNotification | string {
  const parsed = parseNotification(JSON.stringify(atBank.raw), { timezone, receivedAt: now });
  if (!parsed.ok) return parsed.reason;
  const { notification } = parsed;
  const money = (amount: string | null) => (amount === null ? null : formatAmount(parseDecimal(amount)));
  const checkedAt = now.toISOString();
  return {
    ...notification,
    transactionAmount: formatAmount(parseDecimal(notification.transactionAmount)),
    settledAmount: money(notification.settledAmount),
    feeAmount: money(notification.feeAmount),
    vatAmount: money(notification.vatAmount),
    rawBody: atBank.rawBody,
    source: 'RECONCILED',
    confirmation: { status: 'CONFIRMED', checkedAt, differences: [], acknowledgedByBank: atBank.acknowledged },
  };
}

/** `CODE: message` of a failure about an id; anything but a GraphQL error of ours (a bank's, the budget's) is logged, and told as `fault`. */
function describe(error: unknown, logger: Logger, asked: TransferId, fault: string): string {
  const code = (error as GraphQLError | null)?.extensions?.code;
  if (typeof code === 'string') return `${code}: ${(error as Error).message}`;
  logger.error({ err: error, [asked.kind]: asked.id }, `reconciliation: ${fault}`);
  return `INTERNAL_SERVER_ERROR: ${fault}`;
}

/** The non-empty ids, each once, in the order first given. */
function distinct(ids: readonly string[]): string[] {
  return [...new Set(ids.filter((id) => id !== ''))];
}
