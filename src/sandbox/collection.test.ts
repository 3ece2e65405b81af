import { describe, expect, it } from 'vitest';
import { collectionHeaders } from '../../scripts/collection-notifier.ts';
import { startFakeBank, type FakeBankRequest } from '../../test/helpers/fake-bank.ts';
import { call, postJson, startSandbox, useSandbox } from '../../test/helpers/sandbox.ts';
import { expire, Inbox } from '../../test/helpers/wait.ts';
import { Secret } from '../secret.ts';
import type { BankSandbox } from './index.ts';

/** The partner's pair, signed by the test's own code (the bank's side of op 14). */
const signed = collectionHeaders();

/** A webhook that answers each delivery with `responseCode`, keeping what it received. */
async function startWebhook(responseCode = '00') {
  const received = new Inbox<FakeBankRequest>();
  const webhook = await startFakeBank((request, reply) => {
    received.push(request);
    reply.json({ requestSuccessful: true, sessionId: JSON.parse(request.body).sessionId, responseMessage: 'success', responseCode });
  });
  return { url: `${webhook.url}/webhooks/collection`, received };
}

async function makeTransfer(sandbox: BankSandbox, order: Record<string, unknown>) {
  return postJson(`${sandbox.collection.consoleUrl}/transfers`, order);
}

describe("the sandbox bank's collection service (ops 15 to 17)", () => {
  const sandbox = useSandbox();
  const verify = (path: string, headers: Record<string, string> = signed) => call(`${sandbox().urls.collection}${path}`, { headers });

  it('refuses a wrong or missing signature, or another Client-Id, with 401', async () => {
    const wrongSecret = collectionHeaders(signed['client-id'], 'not-the-secret');
    const otherClient = collectionHeaders('someone-else');
    const lowerCase = { ...signed, 'x-auth-signature': signed['x-auth-signature']!.toLowerCase() };
    for (const headers of [wrongSecret, otherClient, lowerCase, {}]) {
      const answer = await verify('/PiPverifyTransaction_settlementid?settlement_id=S-1', headers);
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({ requestSuccessful: false, responseMessage: 'Invalid Client-Id or X-Auth-Signature' });
    }
    const repush = await postJson(`${sandbox().urls.collection}/PiP_RepushTransaction_SettlementId`, { settlement_id: 'S-1' }, wrongSecret);
    expect(repush.status).toBe(401);
  });

  it("answers a transfer it never sent with the bank's not-found shape, amounts written 0.0", async () => {
    const answer = await verify('/PiPverifyTransaction_sessionid?session_id=NEVER-SENT');
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(
      '"tranRemarks":"Transaction not found!!!","transactionAmount":0.0,"settledAmount":0.0,"feeAmount":0.0,"vatAmount":0.0,',
    );
    expect(answer.json).toMatchObject({ sessionId: '', settlementId: '', accountNumber: '', notification_acknowledgement: 0 });
  });

  it('answers 400 to a query without its id', async () => {
    expect((await verify('/PiPverifyTransaction_settlementid')).status).toBe(400);
    expect((await verify('/PiPverifyTransaction_sessionid?session_id=')).status).toBe(400);
  });

  it('answers ops 15 and 16 from what it sent, amounts as JSON numbers from their decimal text', async () => {
    const made = (
      await makeTransfer(sandbox(), {
        accountNumber: '1234567890',
        amount: '12000.50',
        feeAmount: '10.75',
        settledAmount: '11989.75',
        lost: true,
      })
    ).json;
    for (const path of [
      `/PiPverifyTransaction_settlementid?settlement_id=${made.settlementId}`,
      `/PiPverifyTransaction_sessionid?session_id=${made.sessionId}`,
    ]) {
      const answer = await verify(path);
      expect(answer.text).toContain('"transactionAmount":12000.5,"settledAmount":11989.75,"feeAmount":10.75,"vatAmount":0.0,');
      expect(answer.json).toMatchObject({
        settlementId: made.settlementId,
        sessionId: made.sessionId,
        accountNumber: '1234567890',
        currency: 'NGN',
        sourceBankCode: '000013',
        tranDateTime: made.notification.tranDateTime,
        stamp_duty_flg: 1,
        notification_acknowledgement: 0,
      });
      expect(answer.json.settlementDateTime).toMatch(/^\d{1,2}\/\d{1,2}\/\d{4} \d{1,2}:\d\d:\d\d [AP]M$/);
    }
    expect(made.sessionId).toMatch(/^000013\d{24}$/);
  });

  it('writes an amount a float cannot hold digit for digit', async () => {
    const made = (await makeTransfer(sandbox(), { accountNumber: '0123456789', amount: '99999999999999.99', lost: true })).json;
    const answer = await verify(`/PiPverifyTransaction_settlementid?settlement_id=${made.settlementId}`);
    expect(answer.text).toContain('"transactionAmount":99999999999999.99,');
  });

  it('op 17: queues a notification it sent, then delivers the same body, signed; 25 for one it never sent', async () => {
    const webhook = await startWebhook();
    sandbox().collection.deliverTo(webhook.url);
    const made = (await makeTransfer(sandbox(), { accountNumber: '0123456789', amount: '1500.00', lost: true })).json;
    expect(webhook.received).toHaveLength(0);
    const repush = await postJson(
      `${sandbox().urls.collection}/PiP_RepushTransaction_SettlementId`,
      { settlement_id: '', session_id: made.sessionId },
      signed,
    );
    expect(repush.json).toEqual({ requestSuccessful: true, responseCode: '00', responseMessage: 'Transaction has been queued for repush' });
    const [delivery] = await webhook.received.atLeast(1);
    expect(JSON.parse(delivery!.body)).toEqual(made.notification);
    expect(delivery!.headers).toMatchObject(signed);
    const unknown = await postJson(
      `${sandbox().urls.collection}/PiP_RepushTransaction_SettlementId`,
      { settlement_id: 'NEVER-SENT' },
      signed,
    );
    expect(unknown.json).toEqual({ requestSuccessful: false, responseCode: '25', responseMessage: 'Transaction not found' });
    const neither = await postJson(
      `${sandbox().urls.collection}/PiP_RepushTransaction_SettlementId`,
      { settlement_id: '', session_id: '' },
      signed,
    );
    expect(neither.status).toBe(400);
  });

  it('op 17: declines with 96 while it knows no webhook to deliver to', async () => {
    const made = (await makeTransfer(sandbox(), { accountNumber: '0123456789', amount: '1500.00', lost: true })).json;
    const repush = await postJson(
      `${sandbox().urls.collection}/PiP_RepushTransaction_SettlementId`,
      { settlement_id: made.settlementId },
      signed,
    );
    expect(repush.json).toMatchObject({ requestSuccessful: false, responseCode: '96' });
  });
});

describe("the sandbox bank's console", () => {
  const sandbox = useSandbox();

  it("makes a transfer and delivers it, signed, answering with its ids and the webhook's reply; a 00 is acknowledged", async () => {
    const webhook = await startWebhook();
    sandbox().collection.deliverTo(webhook.url);
    const answer = await makeTransfer(sandbox(), { accountNumber: '0123456789', amount: '1500.00', narration: 'Invoice 42' });
    expect(answer.status).toBe(201);
    expect(answer.json).toMatchObject({
      delivered: true,
      webhook: { status: 200, reply: { responseCode: '00', sessionId: answer.json.sessionId } },
      notification: {
        accountNumber: '0123456789',
        transactionAmount: '1500.00',
        settledAmount: '1500.00',
        feeAmount: '0.00',
        tranRemarks: 'Invoice 42',
      },
    });
    const [delivery] = webhook.received;
    expect(delivery!.headers).toMatchObject(signed);
    expect(JSON.parse(delivery!.body)).toEqual(answer.json.notification);
    const verified = await call(
      `${sandbox().urls.collection}/PiPverifyTransaction_settlementid?settlement_id=${answer.json.settlementId}`,
      { headers: signed },
    );
    expect(verified.json.notification_acknowledgement).toBe(1);
  });

  it('a lost transfer is recorded and never delivered; delivering it again later sends it', async () => {
    const webhook = await startWebhook('03');
    sandbox().collection.deliverTo(webhook.url);
    const lost = (await makeTransfer(sandbox(), { accountNumber: '0123456789', amount: '700.00', lost: true })).json;
    expect(lost).toMatchObject({ delivered: false, lost: true });
    expect(webhook.received).toHaveLength(0);
    const again = await postJson(`${sandbox().collection.consoleUrl}/transfers/${lost.settlementId}/deliveries`, {});
    expect(again.json).toMatchObject({ settlementId: lost.settlementId, delivered: true, webhook: { reply: { responseCode: '03' } } });
    // A 03 is no acknowledgement.
    const verified = await call(`${sandbox().urls.collection}/PiPverifyTransaction_sessionid?session_id=${lost.sessionId}`, {
      headers: signed,
    });
    expect(verified.json.notification_acknowledgement).toBe(0);
    expect((await postJson(`${sandbox().collection.consoleUrl}/transfers/NEVER-SENT/deliveries`, {})).status).toBe(404);
  });

  it('says so when it knows no webhook, or the webhook cannot be reached', async () => {
    const nowhere = await makeTransfer(sandbox(), { accountNumber: '0123456789', amount: '1.00' });
    expect(nowhere.json).toMatchObject({ delivered: false, error: 'the bank knows no webhook URL to deliver to' });
    sandbox().collection.deliverTo('http://127.0.0.1:1/webhooks/collection');
    const refused = await makeTransfer(sandbox(), { accountNumber: '0123456789', amount: '1.00' });
    expect(refused.json).toMatchObject({ delivered: false, error: 'ECONNREFUSED' });
  });

  it.each([
    [{ amount: '1.00' }, 'accountNumber must be 10 digits'],
    [{ accountNumber: '012345678', amount: '1.00' }, 'accountNumber must be 10 digits'],
    [{ accountNumber: '0123456789' }, 'amount must be a decimal string such as "1500.00"'],
    [{ accountNumber: '0123456789', amount: 1500 }, 'amount must be a decimal string such as "1500.00"'],
    [{ accountNumber: '0123456789', amount: '1.005' }, 'amount must be a decimal string such as "1500.00"'],
    [{ accountNumber: '0123456789', amount: '1.00', feeAmount: '-1' }, 'feeAmount must be a decimal string such as "1500.00"'],
    [{ accountNumber: '0123456789', amount: '1.00', lost: 'yes' }, 'lost must be true or false'],
  ])('refuses %j with 400 naming the field', async (order, error) => {
    const answer = await makeTransfer(sandbox(), order);
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error });
  });
});

describe("the sandbox bank with the partner's own pair", () => {
  it('signs its deliveries and checks ops 15 to 17 with the pair it is given', async () => {
    const sandbox = await startSandbox({ partner: { clientId: 'partner-7', clientSecret: new Secret('shh-its-a-secret') } });
    const webhook = await startWebhook();
    sandbox.collection.deliverTo(webhook.url);
    const made = (await makeTransfer(sandbox, { accountNumber: '0123456789', amount: '1.00' })).json;
    expect(webhook.received[0]!.headers).toMatchObject(collectionHeaders('partner-7', 'shh-its-a-secret'));
    const path = `/PiPverifyTransaction_settlementid?settlement_id=${made.settlementId}`;
    expect((await call(`${sandbox.urls.collection}${path}`, { headers: collectionHeaders('partner-7', 'shh-its-a-secret') })).status).toBe(
      200,
    );
    expect((await call(`${sandbox.urls.collection}${path}`, { headers: signed })).status).toBe(401);
  });

  it('closes without waiting for a webhook that never answers', async () => {
    const sandbox = await startSandbox();
    const webhook = await startFakeBank(() => undefined);
    sandbox.collection.deliverTo(webhook.url);
    const pending = makeTransfer(sandbox, { accountNumber: '0123456789', amount: '1.00' }).catch(() => undefined);
    await webhook.received.atLeast(1);
    await expire(sandbox.close(), 'the sandbox closing');
    await pending;
  });
});
