// From what a request carries (its Authorization header, or graphql-ws connectionParams) to a Caller.
import { ANONYMOUS, UNCHECKED, type Caller } from './caller.ts';
import { DEVELOPMENT_KEY_THUMBPRINTS } from './development-key.ts';
import { openKeySet, refusingKeys } from './key-set.ts';
import { createTokenVerifier, DevelopmentKeyRefused, type TokenRules } from './verifier.ts';

/** What authentication takes from the configuration; undefined settings turn it off. */
export interface AuthSettings extends TokenRules {
  /** `AUTH_JWKS_URL`: `https://…`, `http://…` or `file:<path>`. */
  jwksUrl: string;
  /** `AUTH_JWKS_MAX_AGE_S` in milliseconds: how long a read of the JWKS counts as current. */
  keysMaxAgeMs: number;
  /** Whether the published development key is refused: everywhere but under the sandbox rules. */
  refuseDevelopmentKey: boolean;
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

/** The authenticator for `settings` (off when undefined). */
export async function createAuthenticator(settings: AuthSettings | undefined): Promise<Authenticator> {
  if (settings === undefined) return { enabled: false, callerOf: () => UNCHECKED };
  // A file is read now: what stops the start names the setting that points at it.
  const found = await openKeySet(settings.jwksUrl, { maxAgeMs: settings.keysMaxAgeMs }).catch((error: unknown) => {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new Error(`AUTH_JWKS_URL=${settings.jwksUrl} could not be read: ${reason}`, { cause: error });
  });
  // Whichever JWKS holds it, by its thumbprint, not by where the JWKS is.
  const keys = settings.refuseDevelopmentKey ? refusingKeys(found, DEVELOPMENT_KEY_THUMBPRINTS, () => new DevelopmentKeyRefused()) : found;
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
