import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import { serveJwks, TestIssuer } from '../../test/helpers/tokens.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { openKeySet } from './key-set.ts';

/** The thumbprint of `issuer`'s key `kid`, as the key set names keys. */
async function thumbprintOf(issuer: TestIssuer, kid: string): Promise<string> {
  return calculateJwkThumbprint(issuer.jwks().keys.find((jwk) => jwk.kid === kid)!);
}

describe('openKeySet over HTTP', () => {
  it('keeps the last good read while the issuer is down, and tries again each cool-down however often it is asked', async () => {
    const issuer = await TestIssuer.create();
    const jwks = await serveJwks(issuer);
    // A max age of 2 s: a cool-down of 200 ms.
    const keys = await openKeySet(jwks.url, { maxAgeMs: 2_000 });
    const first = await thumbprintOf(issuer, issuer.kid);
    expect(await keys.current()).toEqual(new Set([first]));

    jwks.down(true);
    await waitFor(async () => (await keys.current(), jwks.fetches() > 1 ? true : undefined), 10_000);
    // Asked at every turn of the event loop, far more often than the cool-down: the failed read is
    // tried again each cool-down all the same, and the last good read stands meanwhile.
    const failed = jwks.fetches();
    const deadline = Date.now() + 5_000;
    while (jwks.fetches() < failed + 3 && Date.now() < deadline) {
      expect(await keys.current()).toEqual(new Set([first]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(jwks.fetches()).toBeGreaterThanOrEqual(failed + 3);
    jwks.down(false);
    const second = await thumbprintOf(issuer, await issuer.rotate());
    await waitFor(async () => ((await keys.current()).has(second) ? true : undefined));
  });

  it("tells a key's watchers once a read no longer holds it, reading again at its max age though nothing asks", async () => {
    const issuer = await TestIssuer.create();
    const jwks = await serveJwks(issuer);
    const keys = await openKeySet(jwks.url, { maxAgeMs: 300 });
    const withdrawnKid = issuer.kid;
    const watched = await thumbprintOf(issuer, withdrawnKid);
    await keys.current();
    const kept = await thumbprintOf(issuer, await issuer.rotate());
    const told: string[] = [];
    keys.watch(watched, () => told.push('withdrawn'));
    const stopKept = keys.watch(kept, () => told.push('kept'));

    const before = jwks.fetches();
    await waitFor(() => (jwks.fetches() > before ? true : undefined));
    expect(told).toEqual([]);
    issuer.withdraw(withdrawnKid);
    await waitFor(() => (told.length > 0 ? true : undefined));
    // Told once, and only the withdrawn key's watchers.
    const reads = jwks.fetches();
    await waitFor(() => (jwks.fetches() > reads ? true : undefined));
    expect(told).toEqual(['withdrawn']);
    stopKept();
  });
});
