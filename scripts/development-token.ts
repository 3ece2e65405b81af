// Signing a development token with the published development key (dev/): what `npm run token` prints
// and what the bench sends. A production subgraph refuses this key.
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

/** A JWT signed by the development key with these claims. */
export async function signDevelopmentToken(claims: DevelopmentClaims): Promise<string> {
  const jwk = JSON.parse(readFileSync(DEVELOPMENT_PRIVATE_KEY_PATH, 'utf8')) as JWK & { kid: string; alg: string };
  const now = Math.floor(Date.now() / 1000);
  const token = new SignJWT({ scope: claims.scope.trim().split(/\s+/).filter(Boolean).join(' '), accounts: [...claims.accounts] })
    .setProtectedHeader({ alg: jwk.alg, kid: jwk.kid, typ: 'JWT' })
    .setIssuer(claims.issuer ?? DEVELOPMENT_ISSUER)
    .setSubject(claims.subject ?? 'developer')
    .setIssuedAt(now)
    .setExpirationTime(now + claims.lifetimeS);
  if (claims.audience) token.setAudience(claims.audience);
  return token.sign(await importJWK(jwk, jwk.alg));
}
