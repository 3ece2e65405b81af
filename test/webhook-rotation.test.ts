import { describe, expect, it } from 'vitest';
import { collectionHeaders } from '../scripts/collection-notifier.ts';
import { notificationBody, startApp } from './helpers/app.ts';
import { scrape } from './helpers/metrics.ts';

// Made-up test values, not any deployment's.
const CLIENT_ID = 'rotation-collector';
const NEW_SECRET = 'new-webhook-secret-not-real';
const OLD_SECRET = 'old-webhook-secret-not-real';

const matches = (app: { baseUrl: string }, secret: 'current' | 'previous') =>
  scrape(app, `collection_webhook_signature_matches_total{secret="${secret}"}`);

describe('rotating the webhook secret (WEBHOOK_CLIENT_SECRET_PREVIOUS)', () => {
  it('accepts deliveries signed with either secret while both are set, and counts which one each used', async () => {
    const app = await startApp({
      WEBHOOK_CLIENT_ID: CLIENT_ID,
      WEBHOOK_CLIENT_SECRET: NEW_SECRET,
      WEBHOOK_CLIENT_SECRET_PREVIOUS: OLD_SECRET,
    });
    expect(await matches(app, 'current')).toBe(0);
    expect(await matches(app, 'previous')).toBe(0);

    const byOld = notificationBody();
    const byNew = notificationBody();
    expect((await app.deliver(byOld, collectionHeaders(CLIENT_ID, OLD_SECRET))).reply.responseCode).toBe('00');
    expect((await app.deliver(byNew, collectionHeaders(CLIENT_ID, NEW_SECRET))).reply.responseCode).toBe('00');
    expect((await app.deliver(notificationBody(), collectionHeaders(CLIENT_ID, NEW_SECRET))).reply.responseCode).toBe('00');

    const forged = notificationBody();
    expect((await app.deliver(forged, collectionHeaders(CLIENT_ID, 'a-third-secret'))).reply.responseCode).toBe('02');
    expect(await matches(app, 'current')).toBe(2);
    expect(await matches(app, 'previous')).toBe(1);

    const { data } = await app.query(
      'query($a: ID!, $b: ID!, $c: ID!) { a: collectionNotification(settlementId: $a) { settlementId } b: collectionNotification(settlementId: $b) { settlementId } c: collectionNotification(settlementId: $c) { settlementId } }',
      { a: byOld.settlementId, b: byNew.settlementId, c: forged.settlementId },
    );
    expect(data).toEqual({ a: { settlementId: byOld.settlementId }, b: { settlementId: byNew.settlementId }, c: null });
  });

  it('refuses the old secret with 02 once the rotation is over (the variable unset)', async () => {
    const app = await startApp({ WEBHOOK_CLIENT_ID: CLIENT_ID, WEBHOOK_CLIENT_SECRET: NEW_SECRET });
    expect((await app.deliver(notificationBody(), collectionHeaders(CLIENT_ID, OLD_SECRET))).reply.responseCode).toBe('02');
    expect((await app.deliver(notificationBody(), collectionHeaders(CLIENT_ID, NEW_SECRET))).reply.responseCode).toBe('00');
    // Without a rotation there is no previous secret to report.
    expect(await matches(app, 'previous')).toBeUndefined();
    expect(await matches(app, 'current')).toBe(1);
  });
});
