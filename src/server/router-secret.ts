import { ErrorCode } from '../errors.ts';
import type { Secret } from '../secret.ts';

/** The header the federation router sends the shared secret in. */
export const ROUTER_SECRET_HEADER = 'router-secret';

/**
 * Whether a request may use /graphql: always when no ROUTER_SECRET is configured, otherwise only
 * with the exact secret, compared in constant time (`Secret.equals`), so neither the value nor its
 * length leaks through timing.
 */
export function routerSecretAccepted(expected: Secret | undefined, provided: unknown): boolean {
  if (expected === undefined) return true;
  if (typeof provided !== 'string') return false;
  return expected.equals(provided);
}

/** The GraphQL-shaped body of the 401 sent without the router secret. */
export const routerSecretRequiredBody = {
  errors: [
    {
      message: 'This subgraph answers only the federation router: send the Router-Secret header.',
      extensions: { code: ErrorCode.ROUTER_SECRET_REQUIRED },
    },
  ],
};
