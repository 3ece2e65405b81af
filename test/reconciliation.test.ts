// Reconciliation with the bank, end to end against the independent fake of ops 15 to 17: a transfer
// checked on demand and set beside what is stored (bankTransaction), and lists of them checked with
// what never arrived recovered (reconcileCollections), on each store the app runs on.
import { describe, expect, it } from 'vitest';
import { notificationBody } from './helpers/app.ts';
import { subscribe, transferOf } from './helpers/confirming.ts';
import { startFakeCollectionBank } from './helpers/fake-collection-bank.ts';
import { bankCalls, scrape } from './helpers/metrics.ts';
import { RECONCILE_CONCURRENCY } from '../src/collection/reconciliation.ts';
import { check, QUEUED_NEVER_SENT, reconcile, SANDBOX_PAIR, startReconcilingApp, tokenFor } from './helpers/reconciling.ts';
import { serviceUrl } from './helpers/services.ts';
import { databaseUrl, isolatedPostgresUrl, urlStoreBackends } from './helpers/stores.ts';

const STORED = `query ($id: ID!) {
  collectionNotification(settlementId: $id) { settlementId sessionId transactionAmount settledAmount feeAmount vatAmount rawBody source confirmation { status differences acknowledgedByBank } }
}`;

describe.each(urlStoreBackends.filter((backend) => backend.enabled))('reconciliation with the bank on $name', (backend) => {
  async function start(env: Record<string, string> = {}) {
    const bank = await startFakeCollectionBank(SANDBOX_PAIR);
    const database = await backend.create();
    return { bank, database, ...(await startReconcilingApp(bank, { STORE_URL: database.storeUrl, ...env })) };
  }

  it("sets the bank's answer beside the stored record, with each verdict, by settlementId and by sessionId", async () => {
    // Off: the bank is asked only what the checks ask.
    const { app, bank, operator } = await start({ COLLECTION_CONFIRMATION: 'off' });
    const matched = notificationBody();
    const tampered = notificationBody();
    const forged = notificationBody();
    const missing = notificationBody({
      transactionAmount: '99999999999999.99',
      settledAmount: '99999999999999.99',
      feeAmount: '0.00',
      vatAmount: '0.00',
    });
    bank.know(transferOf(matched, { transactionAmount: '1500.0', feeAmount: '10' }));
    bank.know(transferOf(tampered, { transactionAmount: '150.00' }));
    bank.know(transferOf(missing, { notification_acknowledgement: 0 }));
    for (const body of [matched, tampered, forged]) expect((await app.deliver(body)).reply.responseCode).toBe('00');

    const verdict = async (ids: { sessionId?: string; settlementId?: string }) => {
      const { data, errors } = await check(app, operator, ids);
      expect(errors).toBeUndefined();
      return data!.bankTransaction;
    };
    expect(await verdict({ settlementId: matched.settlementId })).toMatchObject({
      verdict: 'MATCHED',
      differences: [],
      atBank: {
        settlementId: matched.settlementId,
        transactionAmount: '1500.00',
        feeAmount: '10.00',
        acknowledged: true,
        sourceBankCode: '000013',
      },
      stored: { settlementId: matched.settlementId, transactionAmount: '1500.00', source: 'WEBHOOK' },
      quarantined: [],
    });
    expect(await verdict({ sessionId: tampered.sessionId })).toMatchObject({
      verdict: 'MISMATCHED',
      differences: ['transactionAmount'],
      stored: { settlementId: tampered.settlementId },
    });
    expect(await verdict({ settlementId: forged.settlementId })).toMatchObject({
      verdict: 'NOT_AT_BANK',
      atBank: null,
      stored: { settlementId: forged.settlementId },
    });
    expect(await verdict({ sessionId: forged.sessionId })).toMatchObject({
      verdict: 'NOT_AT_BANK',
      atBank: null,
      stored: { settlementId: forged.settlementId },
    });
    const lost = await verdict({ settlementId: missing.settlementId });
    expect(lost).toMatchObject({
      verdict: 'MISSING_HERE',
      stored: null,
      atBank: { transactionAmount: '99999999999999.99', acknowledged: false },
    });
    // The bank's own answer, every field, the amounts exactly as its text wrote them.
    expect(lost.atBank.raw).toMatchObject({
      settlementId: missing.settlementId,
      transactionAmount: '99999999999999.99',
      notification_acknowledgement: 0,
      post_flg: 1,
    });
    expect(await verdict({ settlementId: 'NEVER-SEEN-1' })).toEqual({
      verdict: 'UNKNOWN',
      differences: [],
      atBank: null,
      stored: null,
      quarantined: [],
    });
    expect(bank.calls('verifyBySettlementId')).toBe(4);
    expect(bank.calls('verifyBySessionId')).toBe(2);
    expect(await scrape(app, 'collection_reconciliation_checks_total{verdict="NOT_AT_BANK"}')).toBe(2);
  });

  it('lists the quarantined deliveries of a transfer the webhook refused, by either id', async () => {
    const { app, bank, operator } = await start();
    // Refused for its 9-digit account (02, kept), so the bank holds a transfer no money record has.
    const refused = notificationBody({ accountNumber: '012345678' });
    bank.know(transferOf(refused, { accountNumber: '0123456789' }));
    expect((await app.deliver(refused)).reply.responseCode).toBe('02');

    for (const ids of [{ settlementId: refused.settlementId }, { sessionId: refused.sessionId }]) {
      const { data } = await check(app, operator, ids);
      expect(data!.bankTransaction).toMatchObject({
        verdict: 'MISSING_HERE',
        stored: null,
        quarantined: [
          { kind: 'REJECTED', reason: 'invalid_account_number', settlementId: refused.settlementId, sessionId: refused.sessionId },
        ],
      });
    }
  });

  it('imports what the bank holds exactly once, confirmed, its answer as the raw body, published and answered 01 when delivered later', async () => {
    const { app, bank, operator } = await start();
    const everything = await subscribe(app, {}, 1);
    const confirmed = await subscribe(app, { confirmed: true }, 2);
    const amounts = { transactionAmount: '99999999999999.99', settledAmount: '99999999999999.99', feeAmount: '0.00', vatAmount: '0.00' };
    const lost = notificationBody(amounts);
    // The bank writes its zeros as JSON numbers; stored, they are written as money is.
    bank.know(transferOf(lost, { notification_acknowledgement: 0, feeAmount: '0.0', vatAmount: '0' }));

    const { data, errors } = await reconcile(app, operator, { settlementIds: [lost.settlementId], recover: 'IMPORT' });
    expect(errors).toBeUndefined();
    expect(data!.reconcileCollections).toEqual({
      checked: 1,
      matched: 0,
      missingHere: 1,
      mismatched: 0,
      notAtBank: 0,
      unknown: 0,
      recovered: 1,
      failed: 0,
      items: [{ id: lost.settlementId, verdict: 'MISSING_HERE', differences: [], recovered: true, error: null, quarantined: [] }],
    });
    const stored = (await app.query(STORED, { id: lost.settlementId })).data!.collectionNotification;
    expect(stored).toMatchObject({
      ...amounts,
      sessionId: lost.sessionId,
      source: 'RECONCILED',
      confirmation: { status: 'CONFIRMED', differences: [], acknowledgedByBank: false },
    });
    // The bank's op 16 answer as it sent it: its amounts JSON numbers, to the last digit.
    expect(stored.rawBody).toContain('"transactionAmount":99999999999999.99');
    expect(stored.rawBody).toContain('"notification_acknowledgement":0');
    expect(stored.rawBody).toContain('"feeAmount":0.0,"vatAmount":0,');
    // Published like a delivery, and already confirmed: both streams carry it.
    for (const stream of [everything, confirmed]) {
      expect(await stream.first((event) => event.settlementId === lost.settlementId, 10_000)).toMatchObject({ status: 'CONFIRMED' });
    }

    // The bank's own delivery of it, late: a duplicate of a stored transfer.
    expect((await app.deliver(lost)).reply.responseCode).toBe('01');
    // Checked again: here now, and the same.
    const again = await reconcile(app, operator, { settlementIds: [lost.settlementId], recover: 'IMPORT' });
    expect(again.data!.reconcileCollections).toMatchObject({ checked: 1, matched: 1, missingHere: 0, recovered: 0 });
    expect(await scrape(app, 'collection_reconciliation_recoveries_total{mode="IMPORT",outcome="recovered"}')).toBe(1);
  });

  it('stores one of two concurrent imports of a transfer, and compares with a delivery that came first instead of importing it', async () => {
    const { app, bank, operator, database } = await start();
    const lost = notificationBody();
    const delivered = notificationBody();
    bank.know(transferOf(lost));
    bank.know(transferOf(delivered));
    // Both imports (one by each id, so neither joins the other's call) have asked the bank before either stores.
    const gate = Promise.withResolvers<void>();
    for (const id of [lost.settlementId, lost.sessionId] as string[]) bank.answer(id, { after: gate.promise, answer: 'known' });
    const imports = [
      reconcile(app, operator, { settlementIds: [lost.settlementId], recover: 'IMPORT' }),
      reconcile(app, operator, { sessionIds: [lost.sessionId], recover: 'IMPORT' }),
    ];
    await bank.received.until((requests) => requests.filter((r) => r.id === lost.settlementId || r.id === lost.sessionId).length === 2);
    gate.resolve();
    const reports = (await Promise.all(imports)).map((answer) => answer.data!.reconcileCollections.items[0]);
    expect(reports.map((item) => [String(item.verdict), item.recovered]).sort(([a], [b]) => String(a).localeCompare(String(b)))).toEqual([
      ['MATCHED', false],
      ['MISSING_HERE', true],
    ]);

    expect((await app.deliver(delivered)).reply.responseCode).toBe('00');
    const after = await reconcile(app, operator, { settlementIds: [delivered.settlementId], recover: 'IMPORT' });
    expect(after.data!.reconcileCollections.items).toEqual([
      { id: delivered.settlementId, verdict: 'MATCHED', differences: [], recovered: false, error: null, quarantined: [] },
    ]);
    expect(await database.countRows()).toBe(2);
  });

  it('reports an import the store cannot write as not recovered, storing nothing, and imports it once the store is back', async () => {
    const { app, bank, operator, database } = await start();
    const lost = notificationBody();
    bank.know(transferOf(lost));
    await database.breakInserts();
    const failed = await reconcile(app, operator, { settlementIds: [lost.settlementId], recover: 'IMPORT' });
    expect(failed.data!.reconcileCollections).toMatchObject({
      missingHere: 1,
      recovered: 0,
      items: [
        { verdict: 'MISSING_HERE', recovered: false, error: 'INTERNAL_SERVER_ERROR: the store could not be written; nothing was stored.' },
      ],
    });
    expect(await database.countRows()).toBe(0);
    await database.repairInserts();
    const again = await reconcile(app, operator, { settlementIds: [lost.settlementId], recover: 'IMPORT' });
    expect(again.data!.reconcileCollections).toMatchObject({
      recovered: 1,
      items: [{ verdict: 'MISSING_HERE', recovered: true, error: null }],
    });
    expect(await database.countRows()).toBe(1);
  });

  it('answers a REPUSH recovered only once the webhook stored it; refused again, with its quarantine; never arrived, saying the bank queued it', async () => {
    // Off: the confirmer would ask the bank about what the repushes bring.
    const { app, bank, operator, database } = await start({ COLLECTION_CONFIRMATION: 'off' });
    const lost = notificationBody();
    const declined = notificationBody();
    // The bank holds it with a 9-digit account: the webhook refuses it (02, kept) every time it comes.
    const refused = notificationBody({ accountNumber: '012345678' });
    const silent = notificationBody();
    for (const body of [lost, declined, refused, silent]) bank.know(transferOf(body));
    bank.answer(declined.settlementId, 'known', { declined: '96', message: 'System malfunction' });
    bank.answer(silent.settlementId, 'known', QUEUED_NEVER_SENT);
    expect((await app.deliver(refused)).reply.responseCode).toBe('02');

    const ids = [lost, declined, refused, silent].map((body) => body.settlementId);
    const { data, errors } = await reconcile(app, operator, { settlementIds: ids, recover: 'REPUSH' });
    expect(errors).toBeUndefined();
    // Stored by the time the call answers: read at once, never waited for.
    const stored = (await app.query(STORED, { id: lost.settlementId })).data!.collectionNotification;
    expect(stored).toMatchObject({ settlementId: lost.settlementId, source: 'WEBHOOK' });
    const report = data!.reconcileCollections;
    expect(report).toMatchObject({ checked: 4, missingHere: 4, recovered: 1, failed: 0 });
    const rejection = {
      kind: 'REJECTED',
      reason: 'invalid_account_number',
      settlementId: refused.settlementId,
      sessionId: refused.sessionId,
    };
    expect(report.items).toEqual([
      { id: lost.settlementId, verdict: 'MISSING_HERE', differences: [], recovered: true, error: null, quarantined: [] },
      {
        id: declined.settlementId,
        verdict: 'MISSING_HERE',
        differences: [],
        recovered: false,
        error: 'UPSTREAM_REJECTED: the bank did not queue it to be delivered again (responseCode 96: System malfunction).',
        quarantined: [],
      },
      {
        id: refused.settlementId,
        verdict: 'MISSING_HERE',
        differences: [],
        recovered: false,
        error:
          'UPSTREAM_INVALID_RESPONSE: the bank sent it again and the webhook refused it (invalid_account_number): see quarantined; nothing was stored.',
        // The first delivery's refusal, and the repushed one's.
        quarantined: [rejection, rejection],
      },
      {
        id: silent.settlementId,
        verdict: 'MISSING_HERE',
        differences: [],
        recovered: false,
        error: 'UPSTREAM_UNAVAILABLE: the bank queued it to be sent again, but it has not arrived within 10 s; check this id again later.',
        quarantined: [],
      },
    ]);
    expect(await bank.deliveries.first((one) => one.settlementId === refused.settlementId)).toMatchObject({
      reply: { responseCode: '02' },
    });
    expect(await database.countRows()).toBe(1);
    expect(await scrape(app, 'collection_reconciliation_recoveries_total{mode="REPUSH",outcome="recovered"}')).toBe(1);
    expect(await scrape(app, 'collection_reconciliation_recoveries_total{mode="REPUSH",outcome="not_recovered"}')).toBe(3);
  }, 30_000);

  it("waits for a list's repushed deliveries side by side: each is recovered when the bank sends them only once asked for all", async () => {
    const { app, bank, operator } = await start({ COLLECTION_CONFIRMATION: 'off' });
    const lost = Array.from({ length: 2 * RECONCILE_CONCURRENCY }, () => notificationBody());
    for (const body of lost) {
      bank.know(transferOf(body));
      bank.answer(body.settlementId, 'known', QUEUED_NEVER_SENT);
    }
    const answer = reconcile(app, operator, { settlementIds: lost.map((body) => body.settlementId), recover: 'REPUSH' });
    // Waits that held the list's places with the bank would have asked for half of them by now, then waited 10 s.
    await bank.received.until((requests) => requests.filter((one) => one.operation === 'repush').length === lost.length);
    for (const body of lost) expect((await app.deliver(body)).reply.responseCode).toBe('00');
    const { data, errors } = await answer;
    expect(errors).toBeUndefined();
    expect(data!.reconcileCollections).toMatchObject({ checked: lost.length, missingHere: lost.length, recovered: lost.length });
  });

  it('never imports a second money record of one NIP session: the bank holding it under another settlementId is MISMATCHED', async () => {
    const { app, bank, operator, database } = await start({ COLLECTION_CONFIRMATION: 'off' });
    const delivered = notificationBody();
    expect((await app.deliver(delivered)).reply.responseCode).toBe('00');
    const elsewhere = `${delivered.settlementId}7`;
    bank.know(transferOf(delivered, { settlementId: elsewhere }));

    for (const recover of ['IMPORT', 'REPUSH'] as const) {
      const { data, errors } = await reconcile(app, operator, { settlementIds: [elsewhere], recover });
      expect(errors).toBeUndefined();
      expect(data!.reconcileCollections).toMatchObject({
        checked: 1,
        mismatched: 1,
        missingHere: 0,
        recovered: 0,
        items: [{ id: elsewhere, verdict: 'MISMATCHED', differences: ['settlementId'], recovered: false, error: null, quarantined: [] }],
      });
    }
    const { data } = await check(app, operator, { settlementId: elsewhere });
    expect(data!.bankTransaction).toMatchObject({
      verdict: 'MISMATCHED',
      differences: ['settlementId'],
      stored: { settlementId: delivered.settlementId },
    });
    expect(await database.countRows()).toBe(1);
    expect(bank.calls('repush')).toBe(0);
  });

  it('counts an id the bank could not be asked about as failed, with its error, and answers the others', async () => {
    const { app, bank, operator } = await start();
    const [a, b, c] = [notificationBody(), notificationBody(), notificationBody()];
    for (const body of [a, b, c]) bank.know(transferOf(body));
    expect((await app.deliver(a)).reply.responseCode).toBe('00');
    bank.answer(b.settlementId, { status: 503 });
    const ids = [a, b, c].map((body) => body.settlementId);
    const { data, errors } = await reconcile(app, operator, { settlementIds: ids });
    expect(errors).toBeUndefined();
    const report = data!.reconcileCollections;
    expect(report).toMatchObject({ checked: 3, matched: 1, missingHere: 1, failed: 1, recovered: 0 });
    expect(report.matched + report.missingHere + report.mismatched + report.notAtBank + report.unknown + report.failed).toBe(
      report.checked,
    );
    expect(report.items.map((item: { id: string }) => item.id)).toEqual(ids);
    expect(report.items[1]).toEqual({
      id: b.settlementId,
      verdict: null,
      differences: [],
      recovered: false,
      error: expect.stringMatching(/^UPSTREAM_UNAVAILABLE: /),
      quarantined: [],
    });
    expect(report.items[1].error).not.toMatch(/http|127\.0\.0\.1/);

    // The same for one transfer on demand: the usual GraphQL error.
    const down = await check(app, operator, { settlementId: b.settlementId });
    expect(down.data).toEqual({ bankTransaction: null });
    expect(down.errors?.map((error) => error.extensions?.code)).toEqual(['UPSTREAM_UNAVAILABLE']);
  });
});

describe('reconciliation: who may, and what it takes', () => {
  async function start(env: Record<string, string> = {}) {
    const bank = await startFakeCollectionBank(SANDBOX_PAIR);
    return { bank, ...(await startReconcilingApp(bank, env)) };
  }

  it('needs collections:reconcile: collections:read:all and collections:review do not include it, nor does no token', async () => {
    const { app, bank, issuer, operator } = await start({ COLLECTION_CONFIRMATION: 'off' });
    const body = notificationBody();
    bank.know(transferOf(body));
    expect((await app.deliver(body)).reply.responseCode).toBe('00');
    for (const scope of ['collections:read:all', 'collections:review', 'collections:read accounts:read kyc:read']) {
      const headers = await tokenFor(issuer, scope);
      const asked = await check(app, headers, { settlementId: body.settlementId });
      expect(asked.data).toEqual({ bankTransaction: null });
      expect(asked.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHORIZED_FIELD_OR_TYPE']);
      const reconciled = await reconcile(app, headers, { settlementIds: [body.settlementId], recover: 'IMPORT' });
      expect(reconciled.data).toEqual({ reconcileCollections: null });
      expect(reconciled.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHORIZED_FIELD_OR_TYPE']);
    }
    const anonymous = await check(app, { authorization: '' }, { settlementId: body.settlementId });
    expect(anonymous.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    expect(bank.calls()).toBe(0);
    expect(await bankCalls(app, { area: 'collection' })).toBe(0);

    // The operator's token reads the stored record of any account, and nothing else of the store.
    const { data } = await check(app, operator, { settlementId: body.settlementId });
    expect(data!.bankTransaction).toMatchObject({ verdict: 'MATCHED', stored: { settlementId: body.settlementId } });
    const list = await app.query('{ collectionNotifications { nodes { settlementId } } }', {}, operator);
    expect(list.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHORIZED_FIELD_OR_TYPE']);
  });

  it('refuses neither or both ids, both lists, a blank id, and more than 200 ids, naming them, before any bank call', async () => {
    const { app, bank, operator } = await start();
    const refusal = async (answer: Promise<{ errors?: { message: string; extensions?: Record<string, unknown> }[] }>) => {
      const { errors } = await answer;
      expect(errors?.map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
      return errors![0]!.message;
    };
    expect(await refusal(check(app, operator, {}))).toBe('settlementId: or sessionId is needed: ask about a transfer by one of the two.');
    expect(await refusal(check(app, operator, { sessionId: 'N1', settlementId: 'S1' }))).toBe(
      'sessionId: and settlementId were both given: ask about a transfer by one of the two.',
    );
    expect(await refusal(check(app, operator, { settlementId: '  ' }))).toBe('settlementId: must not be blank.');
    expect(await refusal(reconcile(app, operator, {}))).toBe('settlementIds: or sessionIds is needed: the ids to check with the bank.');
    expect(await refusal(reconcile(app, operator, { sessionIds: ['N1'], settlementIds: ['S1'] }))).toBe(
      'sessionIds: and settlementIds were both given: send the ids of one kind per call.',
    );
    const many = Array.from({ length: 201 }, (_, i) => `S-${i}`);
    expect(await refusal(reconcile(app, operator, { settlementIds: many }))).toBe(
      'settlementIds: must hold 1 to 200 ids, not 201: send more in several calls.',
    );
    expect(await refusal(reconcile(app, operator, { sessionIds: [] }))).toBe(
      'sessionIds: must hold 1 to 200 ids, not 0: send more in several calls.',
    );
    expect(await refusal(reconcile(app, operator, { sessionIds: ['N1', 'x'.repeat(65)] }))).toBe(
      'sessionIds[1]: must be at most 64 characters.',
    );
    expect(bank.calls()).toBe(0);
  });

  it('sends again every missing id of a list priced at the whole budget: a REPUSH rides on the price of its id', async () => {
    // Confirmation off: the confirmer would ask the bank about the deliveries the REPUSHes bring.
    const { app, bank, operator } = await start({ MAX_OPERATION_COST: '5', COLLECTION_CONFIRMATION: 'off' });
    const lost = Array.from({ length: 5 }, () => notificationBody());
    for (const one of lost) bank.know(transferOf(one));
    const { data, errors } = await reconcile(app, operator, { settlementIds: lost.map((one) => one.settlementId), recover: 'REPUSH' });
    expect(errors).toBeUndefined();
    expect(data!.reconcileCollections).toMatchObject({ checked: 5, missingHere: 5, recovered: 5, failed: 0 });
    expect(bank.calls('verifyBySettlementId')).toBe(5);
    expect(bank.calls('repush')).toBe(5);
  });

  it('refuses a list dearer than MAX_OPERATION_COST before asking the bank anything, and checks each distinct id once', async () => {
    const { app, bank, operator } = await start({ MAX_OPERATION_COST: '5' });
    const ids = Array.from({ length: 6 }, (_, i) => `S-${i}`);
    const dear = await reconcile(app, operator, { settlementIds: ids });
    expect(dear.errors?.map((error) => [error.extensions?.code, error.extensions?.cost])).toEqual([
      ['COST_ESTIMATED_TOO_EXPENSIVE', { estimated: 6, max: 5 }],
    ]);
    // One bank call an id checked, whatever it recovers.
    const repush = await reconcile(app, operator, { settlementIds: ids, recover: 'REPUSH' });
    expect(repush.errors?.map((error) => [error.extensions?.code, error.extensions?.cost])).toEqual([
      ['COST_ESTIMATED_TOO_EXPENSIVE', { estimated: 6, max: 5 }],
    ]);
    expect(bank.calls()).toBe(0);

    // Given twice, checked once and reported where first given.
    const { data } = await reconcile(app, operator, { settlementIds: ['S-1', 'S-2', 'S-1', 'S-3', 'S-4', 'S-5', 'S-2'] });
    expect(data!.reconcileCollections).toMatchObject({ checked: 5, unknown: 5 });
    expect(data!.reconcileCollections.items.map((item: { id: string }) => item.id)).toEqual(['S-1', 'S-2', 'S-3', 'S-4', 'S-5']);
    expect(bank.calls('verifyBySettlementId')).toBe(5);
  });
});

const redisUrl = serviceUrl('REDIS_URL');

describe.skipIf(!databaseUrl || !redisUrl)('reconciliation on two replicas on PostgreSQL and Redis', () => {
  it("imports a transfer once whichever replicas ask, and the other replica's subscribers get it on both streams", async () => {
    const bank = await startFakeCollectionBank(SANDBOX_PAIR);
    const env = { STORE_URL: await isolatedPostgresUrl(databaseUrl!), PUBSUB_URL: redisUrl! };
    const a = await startReconcilingApp(bank, env);
    const b = await startReconcilingApp(bank, env);
    const everything = await subscribe(b.app, {}, 1);
    const confirmed = await subscribe(b.app, { confirmed: true }, 2);
    const lost = notificationBody();
    bank.know(transferOf(lost));

    const reports = await Promise.all([
      reconcile(a.app, a.operator, { settlementIds: [lost.settlementId], recover: 'IMPORT' }),
      reconcile(b.app, b.operator, { sessionIds: [lost.sessionId], recover: 'IMPORT' }),
    ]);
    const items = reports.map((answer) => answer.data!.reconcileCollections.items[0]);
    expect(items.filter((item) => item.recovered)).toHaveLength(1);
    for (const stream of [everything, confirmed]) await stream.first((event) => event.settlementId === lost.settlementId, 10_000);
    const stored = await b.app.query('{ collectionNotifications { nodes { settlementId source } } }');
    expect(stored.data!.collectionNotifications.nodes).toEqual([{ settlementId: lost.settlementId, source: 'RECONCILED' }]);
    expect(everything.filter((event) => event.settlementId === lost.settlementId)).toHaveLength(1);
    expect(confirmed.filter((event) => event.settlementId === lost.settlementId)).toHaveLength(1);
  });

  it("answers a REPUSH asked of one replica recovered once the other replica's webhook stored the delivery", async () => {
    const bank = await startFakeCollectionBank(SANDBOX_PAIR);
    const env = { STORE_URL: await isolatedPostgresUrl(databaseUrl!), PUBSUB_URL: redisUrl!, COLLECTION_CONFIRMATION: 'off' };
    const a = await startReconcilingApp(bank, env);
    // The bank delivers to the replica started last.
    await startReconcilingApp(bank, env);
    const lost = notificationBody();
    bank.know(transferOf(lost));

    const { data } = await reconcile(a.app, a.operator, { settlementIds: [lost.settlementId], recover: 'REPUSH' });
    expect(data!.reconcileCollections).toMatchObject({ recovered: 1, items: [{ recovered: true, error: null }] });
    expect(await bank.deliveries.first((one) => one.settlementId === lost.settlementId)).toMatchObject({ reply: { responseCode: '00' } });
    const stored = await a.app.query('query ($id: ID!) { collectionNotification(settlementId: $id) { source } }', {
      id: lost.settlementId,
    });
    expect(stored.data!.collectionNotification).toEqual({ source: 'WEBHOOK' });
  });
});
