import { describe, expect, it } from 'vitest';
import { calculateJwkThumbprint, createLocalJWKSet } from 'jose';
import { TEST_ISSUER, TestIssuer } from '../../test/helpers/tokens.ts';
import type { KeySet } from './key-set.ts';
import { createTokenVerifier } from './verifier.ts';

const RULES = { issuer: TEST_ISSUER, audience: undefined, accountsClaim: 'accounts' };

/** The issuer's keys as published now, counting how often a key is looked up (once per verification). */
function countedKeys(issuer: TestIssuer): { keys: KeySet; lookups: () => number } {
  let lookups = 0;
  const keys: KeySet = {
    resolve: (header, token) => ((lookups += 1), createLocalJWKSet(issuer.jwks())(header, token)),
    current: async () => new Set(await Promise.all(issuer.jwks().keys.map((jwk) => calculateJwkThumbprint(jwk)))),
  };
  return { keys, lookups: () => lookups };
}

describe('createTokenVerifier', () => {
  it('verifies a token once: later and concurrent requests with it cost a look-up', async () => {
    const issuer = await TestIssuer.create();
    const { keys, lookups } = countedKeys(issuer);
    const verifier = createTokenVerifier(keys, RULES);
    const token = await issuer.sign({ scope: 'collections:read kyc:read', accounts: ['2233445566', '0123456789', '0123456789'] });
    const [first, second] = await Promise.all([verifier.verify(token), verifier.verify(token)]);
    await verifier.verify(token);
    expect(lookups()).toBe(1);
    expect(second).toBe(first);
    expect(first).toMatchObject({ kind: 'verified', accounts: ['0123456789', '2233445566'] });
    expect(first.kind === 'verified' && [...first.scopes]).toEqual(['collections:read', 'kyc:read']);
  });

  it('reads collections:read:all as every account, whatever the accounts claim says', async () => {
    const issuer = await TestIssuer.create();
    const verifier = createTokenVerifier(countedKeys(issuer).keys, { ...RULES, accountsClaim: 'https://bank/accounts' });
    const token = await issuer.sign({ scope: 'collections:read:all', extra: { 'https://bank/accounts': ['0123456789'] } });
    expect(await verifier.verify(token)).toMatchObject({ kind: 'verified', accounts: 'all' });
    const named = await issuer.sign({ scope: 'collections:read', extra: { 'https://bank/accounts': ['0123456789'] } });
    expect(await verifier.verify(named)).toMatchObject({ kind: 'verified', accounts: ['0123456789'] });
  });

  it('forgets a verified token once its key leaves the key set', async () => {
    const issuer = await TestIssuer.create();
    const { keys, lookups } = countedKeys(issuer);
    const verifier = createTokenVerifier(keys, RULES);
    const token = await issuer.sign({ scope: 'kyc:read' });
    expect(await verifier.verify(token)).toMatchObject({ kind: 'verified' });
    const withdrawn = issuer.kid;
    await issuer.rotate();
    expect(await verifier.verify(token)).toMatchObject({ kind: 'verified' });
    expect(lookups()).toBe(1);
    issuer.withdraw(withdrawn);
    expect(await verifier.verify(token)).toEqual({ kind: 'refused', reason: 'unknown_key' });
    expect(lookups()).toBe(2);
  });

  it('requires exp, and never remembers a refused token', async () => {
    const issuer = await TestIssuer.create();
    const { keys, lookups } = countedKeys(issuer);
    const verifier = createTokenVerifier(keys, RULES);
    const expired = await issuer.sign({ expiresIn: -3600 });
    expect(await verifier.verify(expired)).toEqual({ kind: 'refused', reason: 'expired' });
    expect(await verifier.verify(expired)).toEqual({ kind: 'refused', reason: 'expired' });
    expect(lookups()).toBe(2);
  });
});
