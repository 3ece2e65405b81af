// Reconciliation against the in-process sandbox bank, as the README walks through it: transfers made
// on its console (delivered, lost), a forged and a tampered delivery, each found with bankTransaction;
// a lost one recovered by REPUSH and by IMPORT, arriving on incomingTransfer(confirmed: true).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp } from './helpers/app.ts';
import { subscribe } from './helpers/confirming.ts';
import { check, reconcile, sandboxTransfer } from './helpers/reconciling.ts';
import { urlStoreBackends } from './helpers/stores.ts';

// Under the sandbox rules without AUTH_JWKS_URL nothing checks tokens: no headers needed.
const NONE = {};

/** `npm run simulate:transfer -- <args>` (the script itself, with the test's Node): what it printed. */
async function simulateTransfer(args: string[]): Promise<string> {
  const script = join(import.meta.dirname, '..', 'scripts', 'simulate-transfer.ts');
  const { stdout } = await promisify(execFile)(process.execPath, [script, ...args], { env: { PATH: process.env.PATH } });
  return stdout;
}

describe.each(urlStoreBackends.filter((backend) => backend.enabled))('reconciliation with the sandbox bank on $name', (backend) => {
  async function start() {
    return (await startWith()).app;
  }
  async function startWith() {
    const database = await backend.create();
    return { database, app: await startApp({ STORE_URL: database.storeUrl }) };
  }

  it('finds a delivered transfer MATCHED, a lost one MISSING_HERE, a forged one NOT_AT_BANK, a tampered one MISMATCHED, and a stranger UNKNOWN', async () => {
    const app = await start();
    const delivered = await sandboxTransfer(app, { amount: '2500.50' });
    expect(delivered.webhook?.reply.responseCode).toBe('00');
    const lost = await sandboxTransfer(app, { amount: '99999999999999.99', lost: true });
    const forged = notificationBody();
    expect((await app.deliver(forged)).reply.responseCode).toBe('00');
    // The bank records one amount; a man in the middle tells the webhook another.
    const recorded = await sandboxTransfer(app, { amount: '1500.00', lost: true });
    const tampered = { ...recorded.notification, transactionAmount: '91500.00', settledAmount: '91500.00' };
    expect((await app.deliver(tampered)).reply.responseCode).toBe('00');

    const verdict = async (ids: { sessionId?: string; settlementId?: string }) => {
      const { data, errors } = await check(app, NONE, ids);
      expect(errors).toBeUndefined();
      return data!.bankTransaction;
    };
    expect(await verdict({ settlementId: delivered.settlementId })).toMatchObject({
      verdict: 'MATCHED',
      atBank: { transactionAmount: '2500.50', acknowledged: true, raw: { transactionAmount: '2500.5' } },
      stored: { transactionAmount: '2500.50' },
    });
    expect(await verdict({ sessionId: lost.sessionId })).toMatchObject({
      verdict: 'MISSING_HERE',
      stored: null,
      quarantined: [],
      atBank: { settlementId: lost.settlementId, transactionAmount: '99999999999999.99', acknowledged: false },
    });
    expect(await verdict({ settlementId: forged.settlementId })).toMatchObject({
      verdict: 'NOT_AT_BANK',
      atBank: null,
      stored: { settlementId: forged.settlementId },
    });
    expect(await verdict({ settlementId: recorded.settlementId })).toMatchObject({
      verdict: 'MISMATCHED',
      differences: ['transactionAmount', 'settledAmount'],
      stored: { transactionAmount: '91500.00' },
    });
    expect(await verdict({ settlementId: 'NOT-A-TRANSFER' })).toMatchObject({ verdict: 'UNKNOWN', atBank: null, stored: null });
  });

  it('recovers a `simulate:transfer --lost` one by REPUSH: the sandbox bank delivers it again, stored before the call answers, and on the confirmed stream once confirmed', async () => {
    const app = await start();
    const confirmed = await subscribe(app, { confirmed: true }, 1);
    const printed = await simulateTransfer(['--url', app.baseUrl, '--lost']);
    const [, settlementId, sessionId] = /never delivered it \(settlementId (\S+), sessionId (\S+)\)/.exec(printed)!;
    const lost = { settlementId: settlementId!, sessionId: sessionId! };

    const { data, errors } = await reconcile(app, NONE, { settlementIds: [lost.settlementId], recover: 'REPUSH' });
    expect(errors).toBeUndefined();
    expect(data!.reconcileCollections).toMatchObject({
      checked: 1,
      missingHere: 1,
      recovered: 1,
      items: [{ id: lost.settlementId, verdict: 'MISSING_HERE', recovered: true, error: null }],
    });
    // Recovered means stored: the sandbox bank's delivery went through the webhook before the call answered.
    const stored = await app.query('query ($id: ID!) { collectionNotification(settlementId: $id) { source } }', { id: lost.settlementId });
    expect(stored.data!.collectionNotification).toEqual({ source: 'WEBHOOK' });
    expect(await confirmed.first((event) => event.settlementId === lost.settlementId, 15_000)).toMatchObject({ status: 'CONFIRMED' });
    const after = await check(app, NONE, { settlementId: lost.settlementId });
    expect(after.data!.bankTransaction).toMatchObject({
      verdict: 'MATCHED',
      atBank: { acknowledged: true },
      stored: { settlementId: lost.settlementId },
    });
  });

  it('reports a REPUSH the webhook refused (the sandbox bank delivered it, the store refused its row) as not recovered, with its quarantined delivery', async () => {
    const { app, database } = await startWith();
    const lost = await sandboxTransfer(app, { amount: '1500.00', lost: true });
    // The store refuses its row: the sandbox bank's delivery is refused (02) and kept, never stored.
    await database.refuseRow(lost.settlementId);

    const { data, errors } = await reconcile(app, NONE, { settlementIds: [lost.settlementId], recover: 'REPUSH' });
    expect(errors).toBeUndefined();
    expect(data!.reconcileCollections).toMatchObject({ checked: 1, missingHere: 1, recovered: 0, failed: 0 });
    expect(data!.reconcileCollections.items).toEqual([
      {
        id: lost.settlementId,
        verdict: 'MISSING_HERE',
        differences: [],
        recovered: false,
        error:
          'INTERNAL_SERVER_ERROR: the bank sent it again and the webhook refused it (store_refused_row): see quarantined; nothing was stored.',
        quarantined: [{ kind: 'UNSTORABLE', reason: 'store_refused_row', settlementId: lost.settlementId, sessionId: lost.sessionId }],
      },
    ]);
    expect(await database.countRows()).toBe(0);
  });

  it("recovers a lost transfer by IMPORT: stored at once from the bank's record, on both streams", async () => {
    const app = await start();
    const everything = await subscribe(app, {}, 1);
    const confirmed = await subscribe(app, { confirmed: true }, 2);
    const lost = await sandboxTransfer(app, { amount: '99999999999999.99', lost: true });

    const { data } = await reconcile(app, NONE, { sessionIds: [lost.sessionId], recover: 'IMPORT' });
    expect(data!.reconcileCollections).toMatchObject({ checked: 1, missingHere: 1, recovered: 1 });
    for (const stream of [everything, confirmed]) {
      expect(await stream.first((event) => event.settlementId === lost.settlementId, 10_000)).toMatchObject({ status: 'CONFIRMED' });
    }
    const stored = await app.query('query ($id: ID!) { collectionNotification(settlementId: $id) { transactionAmount source rawBody } }', {
      id: lost.settlementId,
    });
    expect(stored.data!.collectionNotification).toMatchObject({ transactionAmount: '99999999999999.99', source: 'RECONCILED' });
    expect(stored.data!.collectionNotification.rawBody).toContain('"notification_acknowledgement":0');
  });
});
