// Signing tokens: with the published development key (dev/), what `npm run token` prints by default
// and what the bench sends (a production subgraph refuses this key), or with a key of the caller's
// own, as `npm run token -- --key` signs for a staging setup or the live-mode rehearsal.
import { readFileSync } from 'node:fs';
import { importJWK, SignJWT, type JWK } from 'jose';
import { DEVELOPMENT_ISSUER, DEVELOPMENT_PRIVATE_KEY_PATH } from '../src/auth/development-key.ts';

export interface DevelopmentClaims {
  scope: string;
  accounts: readonly string[];
  lifetimeS: number;
  issuer?: string | undefined;
  audience?: string | undefined;
  subject?: string | undefined;
}

/** A private key to sign with, the algorithm it signs with, and the `kid` its public half is published under. */
export interface SigningKey {
  key: Parameters<SignJWT['sign']>[0];
  alg: string;
  kid: string;
}

/** A JWT signed by the development key with these claims. */
export async function signDevelopmentToken(claims: DevelopmentClaims): Promise<string> {
  const jwk = JSON.parse(readFileSync(DEVELOPMENT_PRIVATE_KEY_PATH, 'utf8')) as JWK & { kid: string; alg: string };
  return signToken(claims, { key: await importJWK(jwk, jwk.alg), alg: jwk.alg, kid: jwk.kid });
}

/** A JWT with these claims, signed by `signing` (its `kid` and `alg` in the header). */
export async function signToken(claims: DevelopmentClaims, signing: SigningKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const token = new SignJWT({ scope: claims.scope.trim().split(/\s+/).filter(Boolean).join(' '), accounts: [...claims.accounts] })
    .setProtectedHeader({ alg: signing.alg, kid: signing.kid, typ: 'JWT' })
    .setIssuer(claims.issuer ?? DEVELOPMENT_ISSUER)
    .setSubject(claims.subject ?? 'developer')
    .setIssuedAt(now)
    .setExpirationTime(now + claims.lifetimeS);
  if (claims.audience) token.setAudience(claims.audience);
  return token.sign(signing.key);
}
