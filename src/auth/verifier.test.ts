import { describe, expect, it } from 'vitest';
import { calculateJwkThumbprint, createLocalJWKSet } from 'jose';
import { TEST_ISSUER, TestIssuer } from '../../test/helpers/tokens.ts';
import type { KeySet } from './key-set.ts';
import { CLOCK_TOLERANCE_S, createTokenVerifier } from './verifier.ts';

const RULES = { issuer: TEST_ISSUER, audience: undefined, accountsClaim: 'accounts' };

/**
 * The issuer's keys as published now, counting how often a key is looked up (once per verification);
 * `reread()` tells the watchers of every key the issuer no longer publishes, as a read of its JWKS would.
 */
function countedKeys(issuer: TestIssuer): { keys: KeySet; lookups: () => number; reread: () => Promise<void> } {
  let lookups = 0;
  const watchers = new Set<{ thumbprint: string; withdrawn: () => void }>();
  const current = async () => new Set(await Promise.all(issuer.jwks().keys.map((jwk) => calculateJwkThumbprint(jwk))));
  const keys: KeySet = {
    resolve: (header, token) => ((lookups += 1), createLocalJWKSet(issuer.jwks())(header, token)),
    current,
    watch(thumbprint, withdrawn) {
      const watcher = { thumbprint, withdrawn };
      watchers.add(watcher);
      return () => void watchers.delete(watcher);
    },
  };
  const reread = async () => {
    const held = await current();
    for (const watcher of watchers) if (!held.has(watcher.thumbprint)) watcher.withdrawn();
  };
  return { keys, lookups: () => lookups, reread };
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

  it("gives a verified caller the token's lifetime: its exp plus the clock skew, and its key's withdrawal", async () => {
    const issuer = await TestIssuer.create();
    const { keys, reread } = countedKeys(issuer);
    const verifier = createTokenVerifier(keys, RULES);
    const token = await issuer.sign({ scope: 'kyc:read', expiresIn: -10 });
    const caller = await verifier.verify(token);
    if (caller.kind !== 'verified') throw new Error(`refused: ${JSON.stringify(caller)}`);
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    expect(caller.lifetime.acceptedUntil).toBe((exp + CLOCK_TOLERANCE_S) * 1000);

    let withdrawn = 0;
    const stop = caller.lifetime.onKeyWithdrawn(() => (withdrawn += 1));
    await issuer.rotate();
    await reread();
    expect(withdrawn).toBe(0);
    issuer.withdraw(issuer.jwks().keys[0]!.kid!);
    await reread();
    expect(withdrawn).toBe(1);
    stop();
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
