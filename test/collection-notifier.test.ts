import { describe, expect, it } from 'vitest';
import { collectionHeaders, collectionNotification } from '../scripts/collection-notifier.ts';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';

// SHA-512 of "partner-7:shh", upper-case hex, computed outside this code (`printf 'partner-7:shh' | sha512sum`).
const PARTNER_7_SIGNATURE =
  '92CD0D2A2D2373A1A8F25C05100E2F6C3E6B4276EEF7AF25F85EF05996E816BBAAADFE1F5B5CE0AA1625989313EF30EEE08B02682CFEF4CD5013DA94649BD29C';

// Our webhook accepting what this sends is tested from the other side: src/collection/signature.test.ts
// and test/webhook.test.ts, which posts these bodies and headers over HTTP and expects 00.
describe("the collection notifier (the bank's collection service, for the simulator, the bench and the tests)", () => {
  it('shapes a notification as the bank writes it: amounts as decimal text, local time without offset', () => {
    const body = collectionNotification({ settlementId: 'STL-1', sessionId: 'S-1', transactionAmount: '2500.50' });
    expect(body).toMatchObject({
      settlementId: 'STL-1',
      sessionId: 'S-1',
      transactionAmount: '2500.50',
      settledAmount: '2500.50',
      tranDateTime: '2026-11-22 14:05:09',
    });
  });

  it('signs as the spec says: upper-case hex SHA-512 of "<Client-Id>:<secret>"', () => {
    const headers = collectionHeaders('partner-7', 'shh');
    expect(headers['client-id']).toBe('partner-7');
    expect(headers['x-auth-signature']).toBe(PARTNER_7_SIGNATURE);
    expect(collectionHeaders('partner-7', 'other')['x-auth-signature']).not.toBe(PARTNER_7_SIGNATURE);
  });

  it('signs with the sandbox webhook credentials by default', () => {
    expect(collectionHeaders()['client-id']).toBe(sandboxCredentials.webhookClientId);
    expect(collectionHeaders()['x-auth-signature']).toBe(
      '2CB548A603CA3F36E9FE22858492B9C579259A71D56B93DAD20459C0ABAB35C0E571DBE1E66363D11AF10393B5A0DE04D20D0293DF0D63B3ABEF0D15193282FF',
    );
  });
});
