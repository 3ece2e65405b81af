import { describe, expect, it } from 'vitest';
import { parseNotification } from '../collection/notification.ts';
import { verifySignature } from '../collection/signature.ts';
import { Secret } from '../secret.ts';
import { collectionHeaders, collectionNotification } from './collection-notifier.ts';
import { sandboxCredentials } from './credentials.ts';

// The sandbox's collection service must speak exactly what our webhook accepts, or the simulator,
// the bench and the tests would all exercise the refusal path without anyone noticing.
describe('the sandbox collection notifier', () => {
  it('shapes a notification the webhook accepts, amounts and times as the bank writes them', () => {
    const body = collectionNotification({ settlementId: 'STL-1', sessionId: 'S-1', transactionAmount: '2500.50' });
    const parsed = parseNotification(JSON.stringify(body), { timezone: 'Africa/Lagos', receivedAt: new Date() });
    expect(parsed.ok && parsed.notification).toMatchObject({
      settlementId: 'STL-1',
      transactionAmount: '2500.50',
      transactionTime: '2026-11-22T14:05:09+01:00',
    });
  });

  it('signs with the webhook credentials it is given, upper-case hex as the bank documents', () => {
    const headers = collectionHeaders('partner-7', 'shh');
    expect(headers['x-auth-signature']).toMatch(/^[0-9A-F]{128}$/);
    const expected = (clientId: string, secret: string) => ({ clientId, clientSecret: new Secret(secret) });
    const sent = { clientId: headers['client-id'], signature: headers['x-auth-signature'] };
    expect(verifySignature(sent, expected('partner-7', 'shh'))).toBe(true);
    expect(verifySignature(sent, expected('partner-7', 'other'))).toBe(false);
    expect(collectionHeaders()['client-id']).toBe(sandboxCredentials.webhookClientId);
  });
});
