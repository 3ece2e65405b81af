/**
 * Operators decide what the bank will not (`decideConfirmation`): a notification the bank refuses to
 * answer about is decided by hand, with who and why, and joins the confirmed stream when CONFIRMED;
 * RECHECK asks the bank again and records its answer, even over NOT_AT_BANK; CONFIRMED never changes.
 */
import { describe, expect, it } from 'vitest';
import { notificationBody } from './helpers/app.ts';
import { confirmationOf, idsOf, subscribe, transferOf } from './helpers/confirming.ts';
import { startFakeCollectionBank } from './helpers/fake-collection-bank.ts';
import { captureLogs } from './helpers/logs.ts';
import { scrape } from './helpers/metrics.ts';
import { SANDBOX_PAIR, startReconcilingApp, tokenFor } from './helpers/reconciling.ts';
import { waitFor } from './helpers/wait.ts';

const DECIDE = `mutation ($id: ID!, $decision: ConfirmationDecision!, $reason: String!) {
  decideConfirmation(settlementId: $id, decision: $decision, reason: $reason) {
    settlementId
    confirmation { status checkedAt differences attempts decidedBy reason }
  }
}`;

/** A refusal about one id that lasts: the bank answers 400 for it, whatever is asked. */
const REFUSED = { status: 400, body: { requestSuccessful: false, responseMessage: 'Invalid settlement id' } } as const;

async function setUp() {
  const bank = await startFakeCollectionBank(SANDBOX_PAIR);
  const { logger, logged } = captureLogs();
  const { app, issuer, operator } = await startReconcilingApp(bank, {}, { logger });
  const decide = (id: string, decision: string, reason = 'found on the bank statement of 22 November', headers = operator) =>
    app.query(DECIDE, { id, decision, reason }, headers);
  /** Delivers a body the bank refuses to answer about, and resolves once it has failed to. */
  const stuck = async () => {
    const body = notificationBody();
    bank.know(transferOf(body));
    bank.answer(body.settlementId, REFUSED);
    expect((await app.deliver(body)).reply.responseCode).toBe('00');
    // Its failed ask recorded: PENDING, asked once, its backoff begun.
    await waitFor(async () => {
      const { data } = await app.query(`{ collectionNotification(settlementId: "${body.settlementId}") { confirmation { attempts } } }`);
      return data?.collectionNotification?.confirmation.attempts === 1 ? true : undefined;
    });
    return body;
  };
  return { bank, app, issuer, operator, decide, stuck, logged };
}

describe('decideConfirmation', () => {
  it('confirms by hand a notification the bank refuses to answer about, with who and why, and hands it to the confirmed stream', async () => {
    const { app, decide, stuck, logged } = await setUp();
    const confirmed = await subscribe(app, { confirmed: true }, 1);
    const body = await stuck();
    await confirmationOf(app, body.settlementId, 'PENDING');
    expect(confirmed).toEqual([]);

    const { data, errors } = await decide(body.settlementId, 'CONFIRMED');
    expect(errors).toBeUndefined();
    expect(data!.decideConfirmation).toEqual({
      settlementId: body.settlementId,
      confirmation: {
        status: 'CONFIRMED',
        checkedAt: expect.any(String),
        differences: [],
        attempts: 1,
        decidedBy: 'ops-ada',
        reason: 'found on the bank statement of 22 November',
      },
    });
    await confirmed.atLeast(1);
    expect(idsOf(confirmed)).toEqual([body.settlementId]);
    expect(await scrape(app, 'collection_confirmation_decisions_total{decision="CONFIRMED"}')).toBe(1);
    expect(await scrape(app, 'collection_confirmations_pending')).toBe(0);
    const line = await logged((entry) => entry.settlementId === body.settlementId && entry.decision === 'CONFIRMED');
    expect(line).toMatchObject({
      level: 40,
      decidedBy: 'ops-ada',
      reason: 'found on the bank statement of 22 November',
      before: 'PENDING',
    });
  });

  it('decides NOT_AT_BANK by hand, and refuses what the status does not allow, a blank reason or an unknown id, changing nothing', async () => {
    const { app, decide, stuck } = await setUp();
    const [forged, kept] = [await stuck(), await stuck()];
    expect(
      (await decide(forged.settlementId, 'NOT_AT_BANK', 'not on the bank portal')).data!.decideConfirmation.confirmation,
    ).toMatchObject({
      status: 'NOT_AT_BANK',
      decidedBy: 'ops-ada',
      reason: 'not on the bank portal',
    });
    await decide(kept.settlementId, 'CONFIRMED');

    const refusals = [
      [await decide(forged.settlementId, 'CONFIRMED'), /^decision: .*NOT_AT_BANK/],
      [await decide(kept.settlementId, 'NOT_AT_BANK'), /^decision: .*CONFIRMED never changes/],
      [await decide(kept.settlementId, 'RECHECK'), /^decision: .*CONFIRMED/],
      [await decide(forged.settlementId, 'CONFIRMED', '   '), /^reason: /],
      [await decide('20261122999999999999', 'CONFIRMED'), /^settlementId: /],
    ] as const;
    for (const [{ data, errors }, message] of refusals) {
      expect(data?.decideConfirmation ?? null).toBeNull();
      expect(errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(message),
          extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }),
        }),
      ]);
    }
    expect((await confirmationOf(app, forged.settlementId, 'NOT_AT_BANK')).checkedAt).not.toBeNull();
    await confirmationOf(app, kept.settlementId, 'CONFIRMED');
    expect(await scrape(app, 'collection_confirmation_decisions_total{decision="NOT_AT_BANK"}')).toBe(1);
    expect(await scrape(app, 'collection_confirmation_decisions_total{decision="CONFIRMED"}')).toBe(1);
  });

  it('asks the bank again on RECHECK and records its answer over NOT_AT_BANK: by settlementId, else by sessionId', async () => {
    const { bank, app, decide } = await setUp();
    const confirmed = await subscribe(app, { confirmed: true }, 1);
    const late = notificationBody();
    // Unknown to the bank when asked twice: NOT_AT_BANK.
    await app.deliver(late);
    await confirmationOf(app, late.settlementId, 'NOT_AT_BANK');
    // The bank found it later, and refuses to answer by settlementId: RECHECK asks by sessionId.
    bank.know(transferOf(late));
    bank.answer(late.settlementId, REFUSED);
    const { data, errors } = await decide(late.settlementId, 'RECHECK', 'the bank says it has it now');
    expect(errors).toBeUndefined();
    expect(data!.decideConfirmation.confirmation).toMatchObject({ status: 'CONFIRMED', decidedBy: null, reason: null, attempts: 3 });
    expect(bank.received.filter((r) => r.operation === 'verifyBySessionId').map((r) => r.id)).toEqual([late.sessionId]);
    await confirmed.atLeast(1);
    expect(idsOf(confirmed)).toEqual([late.settlementId]);
    expect(await scrape(app, 'collection_confirmation_decisions_total{decision="RECHECK"}')).toBe(1);
  });

  it('is refused without collections:reconcile, and nothing changes', async () => {
    const { app, issuer, decide, stuck } = await setUp();
    const body = await stuck();
    for (const scope of ['collections:read:all', 'collections:review']) {
      const { data, errors } = await decide(body.settlementId, 'CONFIRMED', 'seen', await tokenFor(issuer, scope));
      expect(data?.decideConfirmation ?? null).toBeNull();
      expect(errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHORIZED_FIELD_OR_TYPE' }) })]);
    }
    await confirmationOf(app, body.settlementId, 'PENDING');
  });
});
