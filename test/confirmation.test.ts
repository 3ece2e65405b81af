/**
 * Confirmation with the bank, end to end against the independent fake of ops 15 to 17: every
 * stored notification asked of the bank in the background and its answer kept on it, and
 * `incomingTransfer(confirmed: true)` handing out only what the bank confirmed, in log order.
 */
import { describe, expect, it } from 'vitest';
import { notificationBody, type NotificationBody } from './helpers/app.ts';
import { confirmationOf, idsOf, startConfirmingApp, subscribe, transferOf } from './helpers/confirming.ts';
import { startFakeCollectionBank } from './helpers/fake-collection-bank.ts';
import { startCallbackRouter, subscribeViaCallback } from './helpers/callback-router.ts';
import { captureLogs } from './helpers/logs.ts';
import { scrape, scrapeSum, subscribersLive } from './helpers/metrics.ts';
import { queryFile, tempSqlitePath } from './helpers/stores.ts';
import { sandboxSecrets } from './helpers/bank-clients.ts';
import { waitFor } from './helpers/wait.ts';

const verifies = (bank: Awaited<ReturnType<typeof startFakeCollectionBank>>) =>
  bank.received.filter((r) => r.operation === 'verifyBySettlementId');

describe('confirmation with the bank', () => {
  it('asks the bank in the background once the 00 is sent, and keeps CONFIRMED with its acknowledgement', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const body = notificationBody({ transactionAmount: '1000.00', settledAmount: '990.00', feeAmount: '10.00', vatAmount: '0.00' });
    // The bank writes its amounts as JSON numbers, another way for the same values.
    bank.know(transferOf(body, { transactionAmount: '1000.0', settledAmount: '990', feeAmount: '10.0', vatAmount: '0.0' }));
    const answer = Promise.withResolvers<void>();
    bank.answer(body.settlementId, { after: answer.promise, answer: 'known' });

    // The reply does not wait for the bank, which is still holding its answer.
    expect((await app.deliver(body)).reply.responseCode).toBe('00');
    const asked = await bank.received.first((r) => r.operation === 'verifyBySettlementId');
    expect(asked).toMatchObject({ id: body.settlementId, signed: true });
    expect(await confirmationOf(app, body.settlementId, 'PENDING')).toEqual({
      source: 'WEBHOOK',
      status: 'PENDING',
      checkedAt: null,
      differences: [],
      acknowledgedByBank: null,
    });
    expect(await scrape(app, 'collection_confirmations_pending')).toBe(1);

    answer.resolve();
    const confirmed = await confirmationOf(app, body.settlementId, 'CONFIRMED');
    expect(confirmed).toEqual({
      source: 'WEBHOOK',
      status: 'CONFIRMED',
      checkedAt: expect.any(String),
      differences: [],
      acknowledgedByBank: true,
    });
    expect(Date.parse(confirmed.checkedAt!)).toBeGreaterThan(Date.now() - 60_000);
    expect(await scrape(app, 'collection_confirmations_total{outcome="CONFIRMED"}')).toBe(1);
    expect(await scrape(app, 'collection_confirmations_total{outcome="MISMATCHED"}')).toBe(0);
    expect(await scrape(app, 'collection_confirmations_total{outcome="NOT_AT_BANK"}')).toBe(0);
    expect(await scrape(app, 'collection_confirmation_failures_total{code="UPSTREAM_UNAVAILABLE"}')).toBe(0);
    expect(await scrape(app, 'collection_confirmation_seconds_count{outcome="CONFIRMED"}')).toBe(1);
    await waitFor(async () => ((await scrape(app, 'collection_confirmations_pending')) === 0 ? true : undefined));
    expect(verifies(bank)).toHaveLength(1);
  });

  it('finds a forged delivery NOT_AT_BANK, logs it at error level, and never hands it to a confirmed subscriber', async () => {
    const bank = await startFakeCollectionBank();
    const { logger, logs, logged } = captureLogs();
    const app = await startConfirmingApp(bank, {}, { logger });
    const confirmed = await subscribe(app, { confirmed: true }, 1);
    const everything = await subscribe(app, {}, 2);
    const forged = notificationBody();
    const genuine = notificationBody();
    bank.know(transferOf(genuine));

    expect((await app.deliver(forged)).reply.responseCode).toBe('00');
    expect((await app.deliver(genuine)).reply.responseCode).toBe('00');
    await confirmed.first((event) => event.settlementId === genuine.settlementId);
    expect(await confirmationOf(app, forged.settlementId, 'NOT_AT_BANK')).toEqual({
      source: 'WEBHOOK',
      status: 'NOT_AT_BANK',
      checkedAt: expect.any(String),
      differences: [],
      acknowledgedByBank: null,
    });
    expect(confirmed).toEqual([expect.objectContaining({ settlementId: genuine.settlementId, status: 'CONFIRMED' })]);
    // Without `confirmed`, both, as they were stored.
    await everything.atLeast(2);
    expect(idsOf(everything)).toEqual([forged.settlementId, genuine.settlementId]);

    const line = await logged((entry) => entry.settlementId === forged.settlementId && entry.outcome === 'NOT_AT_BANK');
    expect(line).toMatchObject({ level: 50, msg: expect.stringContaining('NOT_AT_BANK') });
    expect(await scrape(app, 'collection_confirmations_total{outcome="NOT_AT_BANK"}')).toBe(1);
    const written = JSON.stringify(logs);
    for (const secret of sandboxSecrets) expect(written.includes(secret), 'a secret in the log').toBe(false);
  });

  it('finds a tampered delivery MISMATCHED, naming transactionAmount, to the last digit of 99999999999999.99', async () => {
    const bank = await startFakeCollectionBank();
    const { logger, logged } = captureLogs();
    const app = await startConfirmingApp(bank, {}, { logger });
    const amounts = { transactionAmount: '99999999999999.99', settledAmount: '99999999999999.99', feeAmount: '0.00', vatAmount: '0.00' };
    const exact = notificationBody(amounts);
    const tampered = notificationBody(amounts);
    bank.know(transferOf(exact));
    // As floats the two amounts are one number; as decimals they differ.
    bank.know(transferOf(tampered, { transactionAmount: '99999999999999.98' }));
    await app.deliver(exact);
    await app.deliver(tampered);

    expect(await confirmationOf(app, exact.settlementId, 'CONFIRMED')).toMatchObject({ differences: [] });
    expect(await confirmationOf(app, tampered.settlementId, 'MISMATCHED')).toEqual({
      source: 'WEBHOOK',
      status: 'MISMATCHED',
      checkedAt: expect.any(String),
      differences: ['transactionAmount'],
      acknowledgedByBank: true,
    });
    const line = await logged((entry) => entry.settlementId === tampered.settlementId && entry.outcome !== undefined);
    expect(line).toMatchObject({
      level: 50,
      outcome: 'MISMATCHED',
      differences: ['transactionAmount'],
      msg: expect.stringContaining('transactionAmount'),
    });
    expect(await scrape(app, 'collection_confirmations_total{outcome="MISMATCHED"}')).toBe(1);
  });

  it('has at most CONFIRMATION_CONCURRENCY asks of the bank in flight', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank, { CONFIRMATION_CONCURRENCY: '2' });
    const bodies = Array.from({ length: 5 }, () => notificationBody());
    const answers = new Map(bodies.map((body) => [body.settlementId, Promise.withResolvers<void>()]));
    for (const body of bodies) {
      bank.know(transferOf(body));
      bank.answer(body.settlementId, { after: answers.get(body.settlementId)!.promise, answer: 'known' });
    }
    for (const body of bodies) await app.deliver(body);

    await waitFor(() => (verifies(bank).length >= 2 ? true : undefined));
    // A sweep (every second) would claim and ask more were there a free slot.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(verifies(bank)).toHaveLength(2);
    for (let released = 0; released < bodies.length; released += 1) {
      const asked = verifies(bank);
      expect(asked.length - released).toBeLessThanOrEqual(2);
      answers.get(asked[released]!.id)!.resolve();
      if (released + 2 < bodies.length) await waitFor(() => (verifies(bank).length >= released + 3 ? true : undefined));
    }
    for (const body of bodies) await confirmationOf(app, body.settlementId, 'CONFIRMED');
    // One verify call per notification: none asked twice while it waited for a slot.
    expect(
      verifies(bank)
        .map((r) => r.id)
        .sort(),
    ).toEqual(bodies.map((body) => body.settlementId).sort());
  });

  it('asks the bank one at a time while deliveries keep the event loop busy, and confirms the rest once they ease', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank, { CONFIRMATION_CONCURRENCY: '16' });
    const delivered: NotificationBody[] = [];
    // A steady stream for a second and a half, 40 deliveries in flight at all times: well over 200 a
    // second in every 100 ms window even on a loaded machine. (Bursts with pauses between them would
    // leave windows without a delivery, in which the replica is rightly not busy.)
    const until = performance.now() + 1_500;
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        while (performance.now() < until) {
          const body = notificationBody();
          bank.know(transferOf(body));
          expect((await app.deliver(body)).reply.responseCode).toBe('00');
          delivered.push(body);
        }
      }),
    );
    // Busy (deliveries arriving and the event loop busy most of the time: the test's own clients share
    // it), the replica starts an ask every 50 ms at most (about 30 here), besides those it started
    // before it saw the load; at its concurrency of 16 it would have asked about every one.
    expect(verifies(bank).length).toBeLessThan(delivered.length / 4);

    await waitFor(async () => ((await scrape(app, 'collection_confirmations_pending')) === 0 ? true : undefined), 30_000);
    expect(await scrape(app, 'collection_confirmations_total{outcome="CONFIRMED"}')).toBe(delivered.length);
    expect(new Set(verifies(bank).map((r) => r.id)).size).toBe(delivered.length);
  });

  it('keeps pace with deliveries well below what the webhook can take: the confirmed stream trails the plain one by seconds', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const confirmed = await subscribe(app, { confirmed: true }, 1);
    const delivered: NotificationBody[] = [];
    // About 150 a second for two seconds, in steady steps of 15 every 100 ms.
    for (let step = 0; step < 20; step += 1) {
      const stepStart = performance.now();
      const bodies = Array.from({ length: 15 }, () => notificationBody());
      for (const body of bodies) bank.know(transferOf(body));
      await Promise.all(bodies.map(async (body) => expect((await app.deliver(body)).reply.responseCode).toBe('00')));
      delivered.push(...bodies);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 100 - (performance.now() - stepStart))));
    }
    const last = performance.now();
    await confirmed.atLeast(delivered.length, 15_000);
    // Spaced one at a time, 300 would take 15 s; at the window's pace they follow within seconds.
    expect(performance.now() - last).toBeLessThan(5_000);
    expect(new Set(idsOf(confirmed)).size).toBe(delivered.length);
  });

  it('pauses while the bank is down, asking one at a time with backoff, never probing with one it refused, and hands every one out once the bank is back', async () => {
    const bank = await startFakeCollectionBank();
    const path = tempSqlitePath();
    const app = await startConfirmingApp(bank, { STORE_URL: `sqlite:${path}` });
    const confirmed = await subscribe(app, { confirmed: true }, 1);
    // One the bank refused before it went down, its backoff run out (made due now, as time would).
    const refused = notificationBody();
    bank.know(transferOf(refused));
    bank.answer(refused.settlementId, { status: 400, body: { requestSuccessful: false } });
    await app.deliver(refused);
    await waitFor(async () => ((await scrapeSum(app, 'collection_confirmation_failures_total')) >= 1 ? true : undefined));
    bank.answerEvery({ status: 503 });
    const bodies = Array.from({ length: 6 }, () => notificationBody());
    for (const body of bodies) bank.know(transferOf(body));
    const failures = async () => (await scrape(app, 'collection_confirmation_failures_total{code="UPSTREAM_UNAVAILABLE"}')) ?? 0;
    expect((await app.deliver(bodies[0]!)).reply.responseCode).toBe('00');
    await waitFor(async () => ((await failures()) >= 1 ? true : undefined));
    queryFile(path, `UPDATE collection_notifications SET confirmation_due_ms = 0 WHERE settlement_id = '${refused.settlementId}'`);
    // Stored and answered 00 while the confirmer pauses.
    for (const body of bodies.slice(1)) expect((await app.deliver(body)).reply.responseCode).toBe('00');

    // Two more failed asks: one probe after each pause (about 2 s, then 4 s), one notification each.
    await waitFor(async () => ((await failures()) >= 3 ? true : undefined), 20_000);
    // The first failure paused the whole confirmer: the bank was not asked about each notification in turn.
    const asked = verifies(bank).map((r) => r.id);
    expect(new Set(asked).size).toBeLessThanOrEqual(4);
    // The probes after each pause: never the one the bank refused on its own.
    expect(asked.filter((id) => id === refused.settlementId)).toHaveLength(1);
    await waitFor(async () => ((await scrape(app, 'collection_confirmations_pending')) === bodies.length + 1 ? true : undefined));
    expect(confirmed).toEqual([]);

    bank.answerEvery();
    const back = performance.now();
    // Seen at the next probe, at most 30 s after the last failure.
    await confirmed.atLeast(bodies.length, 35_000);
    expect(performance.now() - back).toBeLessThan(31_000);
    expect(idsOf(confirmed).sort()).toEqual(bodies.map((body) => body.settlementId).sort());
    await confirmationOf(app, refused.settlementId, 'PENDING');
    expect(confirmed.every((event) => event.status === 'CONFIRMED')).toBe(true);
  }, 60_000);

  it('gives a notification the bank refuses a backoff of its own, doubling, then asks by sessionId; it never pauses the others', async () => {
    const bank = await startFakeCollectionBank();
    const path = tempSqlitePath();
    const app = await startConfirmingApp(bank, { STORE_URL: `sqlite:${path}` });
    const refused = notificationBody();
    bank.know(transferOf(refused));
    // A refusal about this one id (400), not the bank being down: asking about the others must go on.
    bank.answer(refused.settlementId, { status: 400, body: { requestSuccessful: false, responseMessage: 'Invalid settlement id' } });
    const row = () =>
      queryFile(
        path,
        `SELECT confirmation_failures AS failures, confirmation_due_ms AS due FROM collection_notifications WHERE settlement_id = '${refused.settlementId}'`,
      )[0] as {
        failures: number;
        due: number;
      };
    /** Resolves once the refused one has failed `count` times; its backoff then, from now. */
    const backoffAfter = async (count: number) => {
      await waitFor(() => (row().failures >= count ? true : undefined));
      return row().due - Date.now();
    };
    expect((await app.deliver(refused)).reply.responseCode).toBe('00');
    const first = await backoffAfter(1);
    expect(first).toBeGreaterThan(25_000);
    expect(first).toBeLessThanOrEqual(30_000);

    const others = Array.from({ length: 3 }, () => notificationBody());
    for (const body of others) {
      bank.know(transferOf(body));
      expect((await app.deliver(body)).reply.responseCode).toBe('00');
    }
    for (const body of others) await confirmationOf(app, body.settlementId, 'CONFIRMED');
    expect(await scrape(app, 'collection_confirmation_failures_total{code="UPSTREAM_BAD_REQUEST"}')).toBe(1);

    // Its backoff run out (made due now, as time would): asked again, and deferred twice as long.
    const due = (failures: number) =>
      queryFile(
        path,
        `UPDATE collection_notifications SET confirmation_due_ms = 0, confirmation_failures = ${failures} WHERE settlement_id = '${refused.settlementId}'`,
      );
    due(1);
    const second = await backoffAfter(2);
    expect(second).toBeGreaterThan(55_000);
    expect(second).toBeLessThanOrEqual(60_000);
    // Three failed asks by settlementId: the next asks the bank by sessionId (op 15), which knows it.
    due(3);
    await confirmationOf(app, refused.settlementId, 'CONFIRMED');
    expect(bank.received.filter((r) => r.operation === 'verifyBySessionId').map((r) => r.id)).toEqual([refused.sessionId]);
    // Never a pause: every failure was about that one notification.
    expect(await scrape(app, 'collection_confirmation_failures_total{code="UPSTREAM_UNAVAILABLE"}')).toBe(0);
  });

  it('takes an error envelope, an empty object or a record wrapped in another for a failed ask, never for not found', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const [envelope, empty, wrapped] = Array.from({ length: 3 }, () => notificationBody());
    for (const body of [envelope!, empty!, wrapped!]) bank.know(transferOf(body));
    bank.answer(envelope!.settlementId, {
      status: 200,
      body: { requestSuccessful: false, responseCode: '96', responseMessage: 'System malfunction' },
    });
    bank.answer(empty!.settlementId, { status: 200, body: {} });
    bank.answer(wrapped!.settlementId, { status: 200, body: { data: transferOf(wrapped!) } });
    for (const body of [envelope!, empty!, wrapped!]) expect((await app.deliver(body)).reply.responseCode).toBe('00');
    await waitFor(async () => ((await scrapeSum(app, 'collection_confirmation_failures_total')) >= 3 ? true : undefined));
    // Seen as failures about each one; asked again later, each still PENDING, none called forged.
    for (const body of [envelope!, empty!, wrapped!]) {
      expect(await confirmationOf(app, body.settlementId, 'PENDING')).toMatchObject({ checkedAt: null });
    }
    expect(await scrape(app, 'collection_confirmations_total{outcome="NOT_AT_BANK"}')).toBe(0);
  });

  it('waits for a second not-found answer before NOT_AT_BANK: a transfer the bank verifies late is CONFIRMED', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank, { CONFIRMATION_NOT_FOUND_RECHECK_S: '2' });
    const late = notificationBody();
    bank.know(transferOf(late));
    // The bank's verify service lags its notifier: not found at first, then found.
    bank.answer(late.settlementId, 'unknown', 'known');
    const started = performance.now();
    await app.deliver(late);
    await confirmationOf(app, late.settlementId, 'CONFIRMED');
    const asks = verifies(bank).filter((r) => r.id === late.settlementId);
    expect(asks).toHaveLength(2);
    // Asked again only once CONFIRMATION_NOT_FOUND_RECHECK_S had passed.
    expect(performance.now() - started).toBeGreaterThan(1_900);
    expect(await scrape(app, 'collection_confirmations_total{outcome="NOT_AT_BANK"}')).toBe(0);
  });

  it('hands a notification out on the confirmed stream when it is confirmed: one the bank will not answer about holds back no other', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const confirmed = await subscribe(app, { confirmed: true }, 1);
    const [head, second, forged, tampered, fourth] = Array.from({ length: 5 }, () => notificationBody());
    for (const body of [head!, second!, fourth!]) bank.know(transferOf(body));
    bank.know(transferOf(tampered!, { accountNumber: '9999999999' }));
    const headAnswer = Promise.withResolvers<void>();
    bank.answer(head!.settlementId, { after: headAnswer.promise, answer: 'known' });
    for (const body of [head, second, forged, tampered, fourth]) await app.deliver(body!);

    await confirmed.atLeast(2);
    expect(idsOf(confirmed).sort()).toEqual([second!.settlementId, fourth!.settlementId].sort());
    await confirmationOf(app, forged!.settlementId, 'NOT_AT_BANK');
    expect((await confirmationOf(app, tampered!.settlementId, 'MISMATCHED')).differences).toEqual(['accountNumber']);
    await confirmationOf(app, head!.settlementId, 'PENDING');

    headAnswer.resolve();
    await confirmed.atLeast(3);
    expect(idsOf(confirmed)[2]).toBe(head!.settlementId);
    // Its cursors are positions in the log of confirmations: the plain stream refuses them, naming `after`.
    const plain = await subscribe(app, { after: confirmed[0]!.cursor });
    await waitFor(() => plain.ended);
    expect(plain.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^after: .*confirmed stream/),
        extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }),
      }),
    ]);
  });

  it('replays after a confirmed cursor what was confirmed after it, in the order of the confirmations, then goes on live, each once', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const live = await subscribe(app, { confirmed: true }, 1);
    const [first, forged, tampered, fourth, fifth, later] = Array.from({ length: 6 }, () => notificationBody());
    for (const body of [first!, fourth!, fifth!, later!]) bank.know(transferOf(body));
    bank.know(transferOf(tampered!, { currency: 'USD' }));
    const laterAnswer = Promise.withResolvers<void>();
    bank.answer(later!.settlementId, { after: laterAnswer.promise, answer: 'known' });
    for (const body of [first, forged, tampered, fourth, fifth, later]) await app.deliver(body!);
    await live.atLeast(3);
    await confirmationOf(app, tampered!.settlementId, 'MISMATCHED');
    await confirmationOf(app, forged!.settlementId, 'NOT_AT_BANK');

    const resumed = await subscribe(app, { confirmed: true, after: live[0]!.cursor });
    await resumed.atLeast(2);
    expect(resumed.map((event) => event.cursor)).toEqual(live.slice(1, 3).map((event) => event.cursor));

    laterAnswer.resolve();
    await resumed.atLeast(3);
    await live.atLeast(4);
    expect(idsOf(resumed)).toEqual(idsOf(live).slice(1));
    expect(idsOf(live).sort()).toEqual([first, fourth, fifth, later].map((body) => body!.settlementId).sort());
    expect(resumed.every((event) => event.status === 'CONFIRMED')).toBe(true);
    // A cursor of the plain stream is refused there, naming `after`.
    const { data } = await app.query(`{ collectionNotification(settlementId: "${first!.settlementId}") { cursor } }`);
    const refused = await subscribe(app, { confirmed: true, after: data!.collectionNotification.cursor });
    await waitFor(() => refused.ended);
    expect(refused.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^after: /),
        extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }),
      }),
    ]);
  });

  it("hands only CONFIRMED notifications to a confirmed subscription over the router's callback protocol", async () => {
    const bank = await startFakeCollectionBank();
    const router = await startCallbackRouter();
    const app = await startConfirmingApp(bank);
    const { body } = await subscribeViaCallback(
      app,
      router.callbackUrl,
      'subscription { incomingTransfer(confirmed: true) { settlementId confirmation { status } } }',
    );
    expect(body).toEqual({ data: null });
    await subscribersLive(app, 1);
    const forged = notificationBody();
    const genuine = notificationBody();
    bank.know(transferOf(genuine));
    await app.deliver(forged);
    await app.deliver(genuine);
    const next = await router.nth('next');
    expect(next.payload).toEqual({
      data: { incomingTransfer: { settlementId: genuine.settlementId, confirmation: { status: 'CONFIRMED' } } },
    });
    await confirmationOf(app, forged.settlementId, 'NOT_AT_BANK');
    expect(router.messages.filter((message) => message.action === 'next')).toHaveLength(1);
  });

  it('gives confirmed and unconfirmed subscribers of one query their own executions, each its own stream', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const confirmedA = await subscribe(app, { confirmed: true }, 1);
    const confirmedB = await subscribe(app, { confirmed: true }, 2);
    const everything = await subscribe(app, { confirmed: false }, 3);
    const forged = notificationBody();
    const genuine = notificationBody();
    bank.know(transferOf(genuine));
    await app.deliver(forged);
    await app.deliver(genuine);
    await Promise.all([confirmedA, confirmedB].map((events) => events.first((event) => event.settlementId === genuine.settlementId)));
    await everything.atLeast(2);
    expect(idsOf(confirmedA)).toEqual([genuine.settlementId]);
    expect(idsOf(confirmedB)).toEqual([genuine.settlementId]);
    expect(idsOf(everything)).toEqual([forged.settlementId, genuine.settlementId]);
  });
});

describe('with COLLECTION_CONFIRMATION=off', () => {
  it('asks the bank nothing, keeps every notification UNCHECKED, and refuses a confirmed stream with BAD_USER_INPUT', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank, { COLLECTION_CONFIRMATION: 'off' });
    const refused = await subscribe(app, { confirmed: true });
    await waitFor(() => refused.ended);
    expect(refused.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^confirmed: .*COLLECTION_CONFIRMATION=off/),
        extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }),
      }),
    ]);

    const everything = await subscribe(app, {}, 1);
    const body = notificationBody();
    bank.know(transferOf(body));
    await app.deliver(body);
    await everything.atLeast(1);
    expect(everything[0]).toMatchObject({ settlementId: body.settlementId, status: 'UNCHECKED' });
    expect(await confirmationOf(app, body.settlementId, 'UNCHECKED')).toMatchObject({ checkedAt: null, acknowledgedByBank: null });
    expect(bank.received).toEqual([]);
    await subscribersLive(app, 1);
  });
});
