// From what a request carries (its Authorization header, or graphql-ws connectionParams) to a Caller.
import { ANONYMOUS, UNCHECKED, type Caller } from './caller.ts';
import { DEVELOPMENT_KEY_THUMBPRINTS } from './development-key.ts';
import { openKeySet, refusingKeys, type KeySetOptions } from './key-set.ts';
import { createTokenVerifier, DevelopmentKeyRefused, type TokenRules } from './verifier.ts';

/** What authentication takes from the configuration; undefined settings turn it off. */
export interface AuthSettings extends TokenRules {
  /** `AUTH_JWKS_URL`: `https://…`, `http://…` or `file:<path>`. */
  jwksUrl: string;
}

export interface Authenticator {
  /** Whether tokens are checked at all (AUTH_JWKS_URL set). */
  readonly enabled: boolean;
  /**
   * The caller of an operation whose `Authorization` value (header or connectionParams) is
   * `authorization`: `unchecked` when authentication is off, `anonymous` without one.
   */
  callerOf(authorization: unknown): Promise<Caller> | Caller;
}

const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]+) *$/i;

/**
 * The authenticator for `settings` (off when undefined). In production the published development
 * key is refused, whichever JWKS holds it.
 */
export async function createAuthenticator(
  settings: AuthSettings | undefined,
  { production, keySet }: { production: boolean; keySet?: KeySetOptions | undefined },
): Promise<Authenticator> {
  if (settings === undefined) return { enabled: false, callerOf: () => UNCHECKED };
  const found = await openKeySet(settings.jwksUrl, keySet);
  const keys = production ? refusingKeys(found, DEVELOPMENT_KEY_THUMBPRINTS, () => new DevelopmentKeyRefused()) : found;
  const verifier = createTokenVerifier(keys, settings);
  return {
    enabled: true,
    callerOf(authorization) {
      if (authorization === undefined || authorization === null || authorization === '') return ANONYMOUS;
      const token = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined;
      if (token === undefined) return { kind: 'refused', reason: 'malformed_token' };
      return verifier.verify(token);
    },
  };
}
