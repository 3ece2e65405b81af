import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Secret } from '../secret.ts';
import { collectionHeaders } from '../../scripts/collection-notifier.ts';
import { expectedSignature, signatureFor, verifySignature } from './signature.ts';

// Made-up test values, not any deployment's.
const CLIENT_ID = 'test-client-42';
const SECRET = 'test-secret-not-real';
const credentials = expectedSignature({ clientId: CLIENT_ID, clientSecret: new Secret(SECRET) });
const valid = signatureFor(CLIENT_ID, SECRET);

describe('signatureFor', () => {
  it('is the upper-case hex SHA-512 of "<Client-Id>:<secret>"', () => {
    const expected = createHash('sha512').update(`${CLIENT_ID}:${SECRET}`).digest('hex').toUpperCase();
    expect(valid).toBe(expected);
    expect(valid).toMatch(/^[0-9A-F]{128}$/);
  });
});

describe('verifySignature', () => {
  it('accepts the configured Client-Id with the upper-case signature the bank documents', () => {
    expect(verifySignature({ clientId: CLIENT_ID, signature: valid }, credentials)).toBe('current');
  });

  it('accepts the signature in lower case too', () => {
    expect(verifySignature({ clientId: CLIENT_ID, signature: valid.toLowerCase() }, credentials)).toBe('current');
  });

  it('refuses a Client-Id other than the configured one, even with a signature made from it', () => {
    const otherId = 'someone-else';
    const signature = signatureFor(otherId, SECRET);
    expect(verifySignature({ clientId: otherId, signature }, credentials)).toBeUndefined();
  });

  it('refuses a correct signature sent with the wrong Client-Id', () => {
    expect(verifySignature({ clientId: 'someone-else', signature: valid }, credentials)).toBeUndefined();
  });

  it('refuses a signature made with the wrong secret', () => {
    const signature = signatureFor(CLIENT_ID, 'wrong-secret');
    expect(verifySignature({ clientId: CLIENT_ID, signature }, credentials)).toBeUndefined();
  });

  it('refuses a signature of another length without throwing', () => {
    expect(verifySignature({ clientId: CLIENT_ID, signature: valid.slice(0, 64) }, credentials)).toBeUndefined();
    expect(verifySignature({ clientId: CLIENT_ID, signature: `${valid}00` }, credentials)).toBeUndefined();
  });

  it('refuses the SHA-512 of the secret alone', () => {
    const signature = createHash('sha512').update(SECRET).digest('hex').toUpperCase();
    expect(verifySignature({ clientId: CLIENT_ID, signature }, credentials)).toBeUndefined();
  });

  it('refuses missing headers', () => {
    expect(verifySignature({ clientId: undefined, signature: valid }, credentials)).toBeUndefined();
    expect(verifySignature({ clientId: CLIENT_ID, signature: undefined }, credentials)).toBeUndefined();
    expect(verifySignature({ clientId: undefined, signature: undefined }, credentials)).toBeUndefined();
  });

  it('refuses empty headers', () => {
    expect(verifySignature({ clientId: '', signature: valid }, credentials)).toBeUndefined();
    expect(verifySignature({ clientId: CLIENT_ID, signature: '' }, credentials)).toBeUndefined();
    expect(verifySignature({ clientId: '', signature: '' }, credentials)).toBeUndefined();
  });

  it('refuses an empty Client-Id even when the configured one is empty', () => {
    const blank = expectedSignature({ clientId: '', clientSecret: new Secret(SECRET) });
    expect(verifySignature({ clientId: '', signature: signatureFor('', SECRET) }, blank)).toBeUndefined();
  });

  // The sandbox signs with its own code; if it and this verifier disagreed, the simulator, the bench
  // and the integration tests would all exercise the refusal path without anyone noticing.
  it('accepts what the sandbox collection service sends, with whatever credentials it is given', () => {
    const headers = collectionHeaders('partner-7', 'shh');
    const sent = { clientId: headers['client-id'], signature: headers['x-auth-signature'] };
    const expected = (secret: string) => expectedSignature({ clientId: 'partner-7', clientSecret: new Secret(secret) });
    expect(verifySignature(sent, expected('shh'))).toBe('current');
    expect(verifySignature(sent, expected('other'))).toBeUndefined();
  });

  describe('during a rotation (WEBHOOK_CLIENT_SECRET_PREVIOUS set)', () => {
    const OLD = 'old-test-secret-not-real';
    const rotating = expectedSignature({ clientId: CLIENT_ID, clientSecret: new Secret(SECRET), previousSecret: new Secret(OLD) });

    it('accepts the new secret and says so', () => {
      expect(verifySignature({ clientId: CLIENT_ID, signature: valid }, rotating)).toBe('current');
    });

    it('accepts the previous secret, in either case, and says so', () => {
      expect(verifySignature({ clientId: CLIENT_ID, signature: signatureFor(CLIENT_ID, OLD) }, rotating)).toBe('previous');
      expect(verifySignature({ clientId: CLIENT_ID, signature: signatureFor(CLIENT_ID, OLD).toLowerCase() }, rotating)).toBe('previous');
    });

    it('still refuses a third secret, and the previous one with another Client-Id', () => {
      expect(verifySignature({ clientId: CLIENT_ID, signature: signatureFor(CLIENT_ID, 'third') }, rotating)).toBeUndefined();
      expect(verifySignature({ clientId: 'someone-else', signature: signatureFor('someone-else', OLD) }, rotating)).toBeUndefined();
    });

    it('refuses the previous secret once the rotation is over', () => {
      expect(verifySignature({ clientId: CLIENT_ID, signature: signatureFor(CLIENT_ID, OLD) }, credentials)).toBeUndefined();
    });
  });
});
