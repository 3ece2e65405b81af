// Operators decide what the bank will not: a notification left PENDING (the bank refuses to answer
// about it, or an operator found it on the bank's statement) is decided by hand, and any not
// CONFIRMED is asked of the bank again on demand. Each decision is kept with who made it and why,
// logged and counted.
import type { CollectionNotificationRecord, ManualDecision } from '../domain/index.ts';
import { badUserInput, UpstreamError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { CollectionStore } from '../store/types.ts';
import type { CollectionClient } from '../upstream/types.ts';
import { reportOutcome } from './confirmation-recorder.ts';
import { failureKind } from '../upstream/failure-kind.ts';
import { verdictOf } from './confirmation-verdict.ts';

/** What `decideConfirmation` takes: an operator's decision by hand, or `RECHECK` to ask the bank now. */
export type ConfirmationDecisionInput = ManualDecision | 'RECHECK';

export interface ConfirmationDecisionsDeps {
  store: Pick<CollectionStore, 'getMany' | 'confirmations'>;
  /** The bank as this operation may use it (its budget). */
  bank: Pick<CollectionClient, 'verifyBySettlementId' | 'verifyBySessionId'>;
  metrics: Metrics;
  logger: Logger;
  /** Told once a notification is CONFIRMED here: the confirmed stream hands it out. */
  onConfirmed: () => void;
  /** `CONFIRMATION_NOT_FOUND_RECHECK_S` in ms. */
  notFoundRecheckMs: number;
  /** The operator's `sub`; null where authorization is off. */
  operator: string | null;
}

/** Creates the operators' decisions for one operation. */
export function createConfirmationDecisions(deps: ConfirmationDecisionsDeps) {
  const { store, metrics, logger, operator } = deps;

  /** The notification as it stands; BAD_USER_INPUT naming settlementId when none is stored under it. */
  async function stored(settlementId: string): Promise<CollectionNotificationRecord> {
    const [record] = await store.getMany([settlementId]);
    if (!record) throw badUserInput('settlementId', 'names no stored notification; nothing was decided.');
    return record;
  }

  async function byHand(record: CollectionNotificationRecord, decision: ManualDecision, reason: string) {
    const result = await store.confirmations.decide({
      settlementId: record.settlementId,
      status: decision,
      decidedBy: operator ?? 'unknown',
      reason,
      decidedAt: new Date().toISOString(),
    });
    if (result.status === 'unknown') throw badUserInput('settlementId', 'names no stored notification; nothing was decided.');
    if (result.status === 'refused') {
      throw badUserInput(
        'decision',
        `${decision} decides only a PENDING notification, and this one is ${result.current}; nothing changed${
          result.current === 'CONFIRMED' ? ' (CONFIRMED never changes: value may have been given on it)' : ' (RECHECK asks the bank again)'
        }.`,
      );
    }
    if (decision === 'CONFIRMED') deps.onConfirmed();
    return result.notification;
  }

  /**
   * Asks the bank now, by settlementId (op 16) and then, where that fails about this transfer or
   * finds nothing, by sessionId (op 15), and records its answer: a verdict over any status but
   * CONFIRMED, or a not-found answer that waits for its second (the notification PENDING again).
   */
  async function recheck(record: CollectionNotificationRecord): Promise<CollectionNotificationRecord> {
    if (record.confirmation.status === 'CONFIRMED') {
      throw badUserInput(
        'decision',
        'RECHECK asks the bank about a notification not yet CONFIRMED, and this one is CONFIRMED, which never changes.',
      );
    }
    const atBank = await ask(record);
    const result = verdictOf(record, atBank, { now: Date.now(), recheckMs: deps.notFoundRecheckMs });
    if (result.kind === 'outcome') {
      const [recorded] = await store.confirmations.record([result.outcome], { overDecided: true });
      if (recorded) {
        reportOutcome(deps, record, result.outcome);
        if (result.outcome.status === 'CONFIRMED') deps.onConfirmed();
      }
    } else if (record.confirmation.status !== 'NOT_AT_BANK') {
      // Not found once more: a verdict waits for a second answer later (a NOT_AT_BANK one stands).
      await store.confirmations.retry([{ ...result.retry, reopen: record.confirmation.status !== 'PENDING' }]);
    }
    return stored(record.settlementId);
  }

  async function ask(record: CollectionNotificationRecord) {
    const bySession = record.sessionId.trim();
    let first: unknown;
    try {
      const atBank = await deps.bank.verifyBySettlementId(record.settlementId);
      if (atBank !== null || bySession === '') return atBank;
    } catch (error) {
      counted(error);
      if (failureKind(error) !== 'about-this-transfer' || bySession === '') throw error;
      first = error;
    }
    try {
      return await deps.bank.verifyBySessionId(bySession);
    } catch (error) {
      counted(error);
      throw first ?? error;
    }
  }

  const counted = (error: unknown) => metrics.confirmationFailures.inc({ code: error instanceof UpstreamError ? error.code : 'INTERNAL' });

  return {
    /** Records `decision` over the notification stored under `settlementId`, and answers it as it now stands. */
    async decide(settlementId: string, decision: ConfirmationDecisionInput, reason: string): Promise<CollectionNotificationRecord> {
      const record = await stored(settlementId);
      const before = record.confirmation.status;
      const decided = decision === 'RECHECK' ? await recheck(record) : await byHand(record, decision, reason);
      metrics.confirmationDecisions.inc({ decision });
      logger.warn(
        { settlementId, decision, reason, decidedBy: operator, before, after: decided.confirmation.status },
        `an operator decided a notification's confirmation by hand: ${decision}`,
      );
      return decided;
    },
  };
}

export type ConfirmationDecisions = ReturnType<typeof createConfirmationDecisions>;
