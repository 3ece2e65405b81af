import { describe, expect, it } from 'vitest';
import { collectionHeaders } from '../scripts/collection-notifier.ts';
import { notificationBody } from './helpers/app.ts';
import { confirmationOf, transferOf } from './helpers/confirming.ts';
import { startLiveApp } from './helpers/counting-bank.ts';
import { startFakeCollectionBank } from './helpers/fake-collection-bank.ts';

// Made-up test values, not any deployment's.
const CLIENT_ID = 'rotation-collector';
const NEW_SECRET = 'new-collection-secret-not-real';
const OLD_SECRET = 'old-collection-secret-not-real';

describe('confirmation through a rotation of the webhook secret (WEBHOOK_CLIENT_SECRET_PREVIOUS)', () => {
  it('confirms while the bank still holds the previous secret, and after it switches to the new one', async () => {
    const bank = await startFakeCollectionBank({ clientId: CLIENT_ID, clientSecret: NEW_SECRET, previousSecret: OLD_SECRET });
    const app = await startLiveApp(bank.url, {
      BANK_COLLECTION_URL: bank.url,
      COLLECTION_CONFIRMATION: 'on',
      WEBHOOK_CLIENT_ID: CLIENT_ID,
      WEBHOOK_CLIENT_SECRET: NEW_SECRET,
      WEBHOOK_CLIENT_SECRET_PREVIOUS: OLD_SECRET,
    });
    const before = notificationBody();
    bank.know(transferOf(before));
    expect((await app.deliver(before, collectionHeaders(CLIENT_ID, OLD_SECRET))).reply.responseCode).toBe('00');
    await confirmationOf(app, before.settlementId, 'CONFIRMED');
    const verifies = () => bank.received.filter((r) => r.operation === 'verifyBySettlementId').map((r) => r.signedWith);
    expect(verifies()).toEqual(['current', 'previous']);

    bank.switchSecret();
    const after = notificationBody();
    bank.know(transferOf(after));
    expect((await app.deliver(after, collectionHeaders(CLIENT_ID, NEW_SECRET))).reply.responseCode).toBe('00');
    await confirmationOf(app, after.settlementId, 'CONFIRMED');
    expect(verifies()).toEqual(['current', 'previous', 'previous', 'current']);
  });
});
