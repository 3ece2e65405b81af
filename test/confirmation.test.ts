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
    const path = tempSqlitePath();
    const app = await startConfirmingApp(bank, { STORE_URL: `sqlite:${path}`, CONFIRMATION_CONCURRENCY: '2' });
    const bodies = Array.from({ length: 5 }, () => notificationBody());
    const answers = new Map(bodies.map((body) => [body.settlementId, Promise.withResolvers<void>()]));
    for (const body of bodies) {
      bank.know(transferOf(body));
      bank.answer(body.settlementId, { after: answers.get(body.settlementId)!.promise, answer: 'known' });
    }
    for (const body of bodies) await app.deliver(body);

    await waitFor(() => (verifies(bank).length >= 2 ? true : undefined));
    // It has claimed more than it asks about (what waits for a free slot): two asks, no more.
    await waitFor(() =>
      Number(queryFile(path, 'SELECT count(*) AS n FROM collection_notifications WHERE confirmation_attempts > 0')[0]!.n) >= 3
        ? true
        : undefined,
    );
    expect(verifies(bank)).toHaveLength(2);
    for (let released = 0; released < bodies.length; released += 1) {
      const asked = verifies(bank);
      expect(asked.length - released).toBeLessThanOrEqual(2);
      answers.get(asked[released]!.id)!.resolve();
      if (released + 2 < bodies.length) await waitFor(() => (verifies(bank).length >= released + 3 ? true : undefined));
    }
    for (const body of bodies) await confirmationOf(app, body.settlementId, 'CONFIRMED');
    expect(new Set(verifies(bank).map((r) => r.id)).size).toBe(bodies.length);
  });

  it('asks the bank one at a time while deliveries arrive at 200 a second or more, and confirms the rest once they ease', async () => {
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
    // Busy, the replica starts an ask every 50 ms at most (about 30 here), besides those it started
    // before it saw the load; at its concurrency of 16 it would have asked about every one.
    expect(verifies(bank).length).toBeLessThan(delivered.length / 4);

    await waitFor(async () => ((await scrape(app, 'collection_confirmations_pending')) === 0 ? true : undefined), 30_000);
    expect(await scrape(app, 'collection_confirmations_total{outcome="CONFIRMED"}')).toBe(delivered.length);
    expect(new Set(verifies(bank).map((r) => r.id)).size).toBe(delivered.length);
  });

  it('holds the confirmed stream back while the bank is down, asking one at a time with backoff, and releases it in order once the bank is back', async () => {
    const bank = await startFakeCollectionBank();
    bank.answerEvery({ status: 503 });
    const app = await startConfirmingApp(bank);
    const confirmed = await subscribe(app, { confirmed: true }, 1);
    const bodies = Array.from({ length: 6 }, () => notificationBody());
    for (const body of bodies) bank.know(transferOf(body));
    const failures = () => scrapeSum(app, 'collection_confirmation_failures_total');
    expect((await app.deliver(bodies[0]!)).reply.responseCode).toBe('00');
    await waitFor(async () => ((await failures()) >= 1 ? true : undefined));
    // Stored and answered 00 while the confirmer pauses.
    for (const body of bodies.slice(1)) expect((await app.deliver(body)).reply.responseCode).toBe('00');

    // Two more failed asks: one probe after each pause (about 1 s, then 2 s), one notification each.
    await waitFor(async () => ((await failures()) >= 3 ? true : undefined), 15_000);
    // The first failure paused the whole confirmer: the bank was not asked about each notification in turn.
    expect(new Set(verifies(bank).map((r) => r.id)).size).toBeLessThanOrEqual(3);
    expect(await scrape(app, 'collection_confirmation_failures_total{code="UPSTREAM_UNAVAILABLE"}')).toBe(await failures());
    await waitFor(async () => ((await scrape(app, 'collection_confirmations_pending')) === bodies.length ? true : undefined));
    expect(confirmed).toEqual([]);

    bank.answerEvery();
    const back = performance.now();
    // Seen at the next probe, at most 30 s after the last failure.
    await confirmed.atLeast(bodies.length, 35_000);
    expect(performance.now() - back).toBeLessThan(31_000);
    expect(idsOf(confirmed)).toEqual(bodies.map((body) => body.settlementId));
    expect(confirmed.every((event) => event.status === 'CONFIRMED')).toBe(true);
  }, 60_000);

  it('goes on confirming the others while the bank refuses one notification, which stays PENDING and is asked again within 30 s', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const refused = notificationBody();
    bank.know(transferOf(refused));
    // A refusal about this one id (400), not the bank being down: asking about the others must go on.
    bank.answer(refused.settlementId, { status: 400, body: { requestSuccessful: false, responseMessage: 'Invalid settlement id' } });
    expect((await app.deliver(refused)).reply.responseCode).toBe('00');
    await waitFor(async () =>
      ((await scrape(app, 'collection_confirmation_failures_total{code="UPSTREAM_BAD_REQUEST"}')) ?? 0) >= 1 ? true : undefined,
    );

    const others = Array.from({ length: 3 }, () => notificationBody());
    for (const body of others) {
      bank.know(transferOf(body));
      expect((await app.deliver(body)).reply.responseCode).toBe('00');
    }
    for (const body of others) await confirmationOf(app, body.settlementId, 'CONFIRMED');
    const asked = () => verifies(bank).filter((r) => r.id === refused.settlementId).length;
    await waitFor(() => (asked() >= 2 ? true : undefined), 35_000);
    expect((await confirmationOf(app, refused.settlementId, 'PENDING')).checkedAt).toBeNull();
  }, 60_000);

  it('holds back, on the confirmed stream, what follows a PENDING notification until the bank has answered for it, and never waits for one the bank refuted', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const confirmed = await subscribe(app, { confirmed: true }, 1);
    const [head, second, forged, tampered, fourth] = Array.from({ length: 5 }, () => notificationBody());
    for (const body of [head!, second!, fourth!]) bank.know(transferOf(body));
    bank.know(transferOf(tampered!, { accountNumber: '9999999999' }));
    const headAnswer = Promise.withResolvers<void>();
    bank.answer(head!.settlementId, { after: headAnswer.promise, answer: 'known' });
    for (const body of [head, second, forged, tampered, fourth]) await app.deliver(body!);

    await confirmationOf(app, second!.settlementId, 'CONFIRMED');
    await confirmationOf(app, forged!.settlementId, 'NOT_AT_BANK');
    expect((await confirmationOf(app, tampered!.settlementId, 'MISMATCHED')).differences).toEqual(['accountNumber']);
    await confirmationOf(app, fourth!.settlementId, 'CONFIRMED');
    await confirmationOf(app, head!.settlementId, 'PENDING');
    expect(confirmed).toEqual([]);

    headAnswer.resolve();
    await confirmed.atLeast(3);
    expect(idsOf(confirmed)).toEqual([head, second, fourth].map((body) => body!.settlementId));
    // The same cursors as everywhere else.
    const { data } = await app.query(`{ collectionNotifications(first: 10) { edges { cursor node { settlementId } } } }`);
    const cursors = new Map(
      (data!.collectionNotifications.edges as { cursor: string; node: { settlementId: string } }[]).map((edge) => [
        edge.node.settlementId,
        edge.cursor,
      ]),
    );
    expect(confirmed.map((event) => event.cursor)).toEqual(idsOf(confirmed).map((id) => cursors.get(id)));
  });

  it('replays after a cursor only the CONFIRMED notifications, then goes on live, each once', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const [first, forged, tampered, fourth, fifth, later] = Array.from({ length: 6 }, () => notificationBody());
    for (const body of [first!, fourth!, fifth!, later!]) bank.know(transferOf(body));
    bank.know(transferOf(tampered!, { currency: 'USD' }));
    const laterAnswer = Promise.withResolvers<void>();
    bank.answer(later!.settlementId, { after: laterAnswer.promise, answer: 'known' });
    for (const body of [first, forged, tampered, fourth, fifth, later]) await app.deliver(body!);
    await confirmationOf(app, fifth!.settlementId, 'CONFIRMED');
    await confirmationOf(app, tampered!.settlementId, 'MISMATCHED');
    await confirmationOf(app, forged!.settlementId, 'NOT_AT_BANK');

    const { data } = await app.query(`{ collectionNotification(settlementId: "${first!.settlementId}") { cursor } }`);
    const resumed = await subscribe(app, { confirmed: true, after: data!.collectionNotification.cursor });
    await resumed.atLeast(2);
    expect(idsOf(resumed)).toEqual([fourth!.settlementId, fifth!.settlementId]);

    laterAnswer.resolve();
    await resumed.atLeast(3);
    expect(idsOf(resumed)).toEqual([fourth, fifth, later].map((body) => body!.settlementId));
    expect(resumed.every((event) => event.status === 'CONFIRMED')).toBe(true);
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
