// Verifying a caller's JWT with jose, and remembering the verified ones until they expire or their
// key leaves the issuer's JWKS.
import { errors, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { createSingleFlight } from '../async/single-flight.ts';
import { ALL_ACCOUNTS_SCOPE, type Caller, type TokenLifetime, type TokenRefusal, type VerifiedCaller } from './caller.ts';
import { thumbprintOf, type KeySet } from './key-set.ts';

/**
 * Asymmetric algorithms only: an HMAC (HS*) token would verify with a public key used as its
 * secret, and `none` with nothing at all.
 */
export const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** Clock skew allowed on `exp` and `nbf` between the issuer and us (the contract's). */
export const CLOCK_TOLERANCE_S = 30;

/** Verified tokens remembered; a caller's token is typically reused for its whole lifetime. */
const CACHED_TOKENS = 10_000;

export interface TokenRules {
  /** `AUTH_ISSUER`: the `iss` every token must carry, when set (always, outside the sandbox rules). */
  issuer: string | undefined;
  /** `AUTH_AUDIENCE`: the `aud` every token must carry, when set. */
  audience: string | undefined;
  /** `AUTH_ACCOUNTS_CLAIM`: the claim listing the accounts whose collections the caller may read. */
  accountsClaim: string;
}

export interface TokenVerifier {
  /** The caller a token stands for: verified, or refused with the reason; never throws. */
  verify(token: string): Promise<Caller>;
}

/** Thrown by a key resolver that refuses the key it found (the development key, outside the sandbox). */
export class DevelopmentKeyRefused extends Error {
  constructor() {
    super('the token is signed with the published development key, refused outside the sandbox');
    this.name = 'DevelopmentKeyRefused';
  }
}

/**
 * Verifies tokens against `keys` and `rules`: signature, `exp` (required) and `nbf` with clock
 * tolerance, `iss`, `aud`. A verified token is remembered, so a caller's later requests cost a
 * look-up, until its `exp` or until the key that signed it is no longer in the JWKS as last read (a
 * key withdrawn after a compromise stops every token it signed); a token verifying right now is
 * verified once for all who wait on it.
 */
export function createTokenVerifier(keys: KeySet, rules: TokenRules): TokenVerifier {
  const verified = new LRUCache<string, { caller: VerifiedCaller; key: string }>({ max: CACHED_TOKENS });
  const verifying = createSingleFlight();
  const options = {
    ...(rules.issuer === undefined ? {} : { issuer: rules.issuer }),
    ...(rules.audience === undefined ? {} : { audience: rules.audience }),
    algorithms: ALLOWED_ALGORITHMS,
    clockTolerance: CLOCK_TOLERANCE_S,
    requiredClaims: ['exp'],
  };

  const verifyNow = async (token: string): Promise<Caller> => {
    try {
      const { payload, key } = await jwtVerify(token, keys.resolve, options);
      const thumbprint = await thumbprintOf(key);
      const lifetime: TokenLifetime = {
        // jose accepts a token until its exp plus the tolerance: what it opens lasts as long.
        acceptedUntil: (payload.exp! + CLOCK_TOLERANCE_S) * 1000,
        onKeyWithdrawn: (withdrawn) => keys.watch(thumbprint, withdrawn),
      };
      const caller = callerOf(payload, rules.accountsClaim, lifetime);
      if (caller.kind === 'verified') verified.set(token, { caller, key: thumbprint });
      return caller;
    } catch (error) {
      return { kind: 'refused', reason: refusalOf(error) };
    }
  };

  return {
    async verify(token) {
      const known = verified.get(token);
      if (known !== undefined && known.caller.lifetime.acceptedUntil > Date.now()) {
        if ((await keys.current()).has(known.key)) return known.caller;
        // Its key was withdrawn: verified again, which now fails (unknown_key) unless the key is back.
        verified.delete(token);
      }
      return verifying.share(token, () => verifyNow(token));
    },
  };
}

/** The grants of a verified payload: its scopes and accounts; refused when a claim has the wrong shape. */
function callerOf(payload: JWTPayload, accountsClaim: string, lifetime: TokenLifetime): Caller {
  const scope = payload.scope ?? '';
  const accounts = payload[accountsClaim] ?? [];
  if (typeof scope !== 'string' || !Array.isArray(accounts) || !accounts.every((a) => typeof a === 'string')) {
    return { kind: 'refused', reason: 'invalid_claims' };
  }
  const scopes = new Set(scope.split(' ').filter((s) => s !== ''));
  return {
    kind: 'verified',
    scopes,
    accounts: scopes.has(ALL_ACCOUNTS_SCOPE) ? 'all' : [...new Set(accounts)].sort(),
    lifetime,
    subject: typeof payload.sub === 'string' ? payload.sub : undefined,
  };
}

/** What a jose failure means, as one of the closed set of reasons (never its message: it may quote claims). */
function refusalOf(error: unknown): TokenRefusal {
  if (error instanceof DevelopmentKeyRefused) return 'development_key';
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'wrong_issuer';
    if (error.claim === 'aud') return 'wrong_audience';
    if (error.claim === 'nbf') return 'not_yet_valid';
    return 'invalid_claims';
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) return 'algorithm_not_allowed';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'bad_signature';
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) return 'unknown_key';
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'malformed_token';
  // A JWKS that could not be fetched, timed out, or is not a key set.
  return 'keys_unavailable';
}
