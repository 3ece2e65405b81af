// Reconciliation with the bank: a transfer checked with the bank's collection service on demand (ops
// 15/16) and set beside what the store holds, and a list of them checked a few at a time, each one the
// bank holds that never reached the store recovered: sent again through the webhook (op 17) and waited
// for until stored, or the bank's own record stored as the money record, exactly once, and published
// like any delivery. `recovered` is said only of a money record stored by the time the call answers.
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
  type QuarantinedDeliveryRecord,
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
import { createArrivalWatch, REPUSH_WAIT_MS, type Arrival, type ArrivalWatch } from './repush-arrivals.ts';

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
  /** Told of an import's commit, as of a delivery's: every replica's subscribers get it; wakes a REPUSH's wait. */
  notificationFeed: Pick<NotificationFeed, 'announce' | 'onAdvance'>;
  /** Told of an import's commit: it is stored CONFIRMED, so the confirmed stream hands it out on every replica. */
  onConfirmed: () => void;
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
  /**
   * Checks each distinct id (a few at a time) and recovers what is MISSING_HERE as `recover` says, a
   * REPUSH waiting for its delivery to be stored (the waits of a list run side by side); never rejects for one id.
   */
  reconcile(list: TransferIds, recover: RecoverMode): Promise<ReconcileReportRecord>;
}

/** Reconciliation over `deps`, for one GraphQL operation. */
export function createReconciliation(deps: ReconciliationDeps): Reconciliation {
  const { bank, store, metrics, logger } = deps;

  const askBank = ({ kind, id }: TransferId) =>
    kind === 'sessionId' ? bank.collection.verifyBySessionId(id) : bank.collection.verifyBySettlementId(id);

  /**
   * The money record of the transfer: the bank's settlementId's (or the one asked by), else one with
   * its NIP session id. A session is one transfer, so a record of it under another settlementId is
   * that transfer's (compared: `settlementId` differs), never a reason to store a second one.
   */
  async function storedOf(asked: TransferId, atBank: BankTransactionRecord | null): Promise<CollectionNotificationRecord | null> {
    const settlementId = atBank?.settlementId ?? (asked.kind === 'settlementId' ? asked.id : undefined);
    const [bySettlement] = settlementId === undefined ? [null] : await store.getMany([settlementId]);
    if (bySettlement) return bySettlement;
    const sessionId = (atBank?.sessionId ?? (asked.kind === 'sessionId' ? asked.id : '')).trim();
    return sessionId === '' ? null : store.findBySessionId(sessionId);
  }

  /** The quarantined deliveries with either id of the transfer, newest first. */
  const quarantinedOf = (ids: { settlementIds: string[]; sessionIds: string[] }) =>
    store.quarantine.withTransferIds({
      settlementIds: distinct(ids.settlementIds),
      sessionIds: distinct(ids.sessionIds),
      limit: MAX_QUARANTINED_LISTED,
    });

  const count = (verdict: string) => metrics.reconciliationChecks.inc({ verdict });

  /**
   * One id checked, and recovered as `recover` says: `item` is its line, settled once a repushed
   * delivery has been waited for, so the wait holds none of the list's places with the bank.
   */
  async function reconcileOne(
    asked: TransferId,
    recover: RecoverMode,
    arrivals: ArrivalWatch,
  ): Promise<{ item: Promise<ReconcileItemRecord> }> {
    let atBank: BankTransactionRecord | null;
    let comparison: Comparison;
    let quarantined: QuarantinedDeliveryRecord[] = [];
    try {
      atBank = await askBank(asked);
      comparison = compareWithBank(atBank, await storedOf(asked, atBank));
      // What the webhook refused of a missing one: why it is missing, and where a repush's refusal will show.
      if (comparison.verdict === 'MISSING_HERE' && atBank !== null) quarantined = await quarantinedOf(idsOf(asked, atBank));
    } catch (error) {
      count('FAILED');
      const message = describe(error, logger, asked, 'the store could not be read; check this id again.');
      return { item: Promise.resolve({ id: asked.id, verdict: null, differences: [], recovered: false, error: message, quarantined: [] }) };
    }
    count(comparison.verdict);
    const item = (recovery: Recovery = { recovered: false, error: null }): ReconcileItemRecord => {
      if (comparison.verdict === 'MISSING_HERE' && recover !== 'NONE') {
        metrics.reconciliationRecoveries.inc({ mode: recover, outcome: recovery.recovered ? 'recovered' : 'not_recovered' });
      }
      return {
        id: asked.id,
        ...(recovery.comparison ?? comparison),
        recovered: recovery.recovered,
        error: recovery.error,
        // Stored meanwhile (compared instead): no longer missing, so nothing of it is listed.
        quarantined: recovery.quarantined ?? (recovery.comparison ? [] : quarantined),
      };
    };
    if (comparison.verdict !== 'MISSING_HERE' || recover === 'NONE' || atBank === null) return { item: Promise.resolve(item()) };
    if (recover === 'IMPORT') return { item: Promise.resolve(item(await importRecord(atBank))) };
    const queued = await repush(atBank);
    if (queued !== undefined) return { item: Promise.resolve(item(queued)) };
    const { settlementId, sessionId } = atBank;
    return {
      item: arrivals
        .wait({ settlementId, sessionId, quarantinedBefore: quarantined })
        .then(async (arrival) => item(await arrived(atBank, arrival))),
    };
  }

  /** Op 17: the bank sends the notification again, through the webhook and all its rules. Undefined once it is queued, else why not. */
  async function repush(atBank: BankTransactionRecord): Promise<Recovery | undefined> {
    const ids = { settlementId: atBank.settlementId, sessionId: atBank.sessionId };
    try {
      const answer = await deps.resend.repush(ids);
      if (answer.queued) {
        logger.info({ ...ids, operator: deps.operator }, 'reconciliation: the bank queued a missing transfer to be delivered again');
        return undefined;
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

  /** A queued repush's outcome: stored, refused again by the webhook (its quarantined deliveries listed), or not arrived in time. */
  async function arrived(atBank: BankTransactionRecord, arrival: Arrival): Promise<Recovery> {
    const ids = { settlementId: atBank.settlementId, sessionId: atBank.sessionId, operator: deps.operator };
    if (arrival.outcome === 'stored') {
      logger.info(ids, 'reconciliation: a repushed transfer arrived and is stored');
      return { recovered: true, error: null };
    }
    if (arrival.outcome === 'quarantined') {
      const { kind, reason } = arrival.refusal;
      logger.warn({ ...ids, quarantine: kind, reason }, 'reconciliation: the webhook refused a repushed transfer again');
      const quarantined = await quarantinedOf(idsOf({ kind: 'settlementId', id: atBank.settlementId }, atBank)).catch(() => [
        arrival.refusal,
      ]);
      // The bank's notification broke the webhook's rules, or the store refused its row: whose fault the code says.
      const code = kind === 'UNSTORABLE' ? 'INTERNAL_SERVER_ERROR' : 'UPSTREAM_INVALID_RESPONSE';
      const error = `${code}: the bank sent it again and the webhook refused it (${reason}): see quarantined; nothing was stored.`;
      return { recovered: false, error, quarantined };
    }
    logger.warn(ids, 'reconciliation: a repushed transfer has not arrived in time');
    const error = arrival.unreadable
      ? `INTERNAL_SERVER_ERROR: the bank queued it to be sent again, and the store could not be read to see it arrive; check this id again.`
      : `UPSTREAM_UNAVAILABLE: the bank queued it to be sent again, but it has not arrived within ${REPUSH_WAIT_MS / 1000} s; check this id again later.`;
    return { recovered: false, error };
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
    deps.onConfirmed();
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
      const quarantined = await quarantinedOf(idsOf(asked, atBank, stored));
      return { ...comparison, atBank, stored, quarantined };
    },
    async reconcile({ kind, ids }, recover) {
      const arrivals = createArrivalWatch({ store, notificationFeed: deps.notificationFeed, logger });
      const lines = await pMap(distinct(ids), (id) => reconcileOne({ kind, id }, recover, arrivals), {
        concurrency: RECONCILE_CONCURRENCY,
      });
      return reconcileReport(await Promise.all(lines.map((line) => line.item)));
    },
  };
}

/** What a recovery came to; `comparison` when the transfer turned out stored meanwhile, `quarantined` when refused again. */
interface Recovery {
  recovered: boolean;
  error: string | null;
  comparison?: Comparison | undefined;
  quarantined?: QuarantinedDeliveryRecord[] | undefined;
}

/** Each id of a transfer: the one asked by, the bank's and the stored record's. */
function idsOf(
  asked: TransferId,
  ...records: ({ settlementId: string; sessionId: string | null } | null)[]
): { settlementIds: string[]; sessionIds: string[] } {
  const ids = (field: TransferIdKind) => [asked.kind === field ? asked.id : '', ...records.map((record) => record?.[field] ?? '')];
  return { settlementIds: ids('settlementId'), sessionIds: ids('sessionId') };
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
