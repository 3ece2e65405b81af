import { createHash, timingSafeEqual } from 'node:crypto';
import type { Secret } from '../secret.ts';

/** The header the federation router sends the shared secret in. */
export const ROUTER_SECRET_HEADER = 'router-secret';

/**
 * Whether a request may use /graphql: always when no ROUTER_SECRET is configured, otherwise only
 * with the exact secret. Compared as SHA-256 digests in constant time, so neither the value nor
 * its length leaks through timing.
 */
export function routerSecretAccepted(expected: Secret | undefined, provided: unknown): boolean {
  if (expected === undefined) return true;
  if (typeof provided !== 'string') return false;
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(provided), digest(expected.reveal()));
}

/** The GraphQL-shaped body of the 401 sent without the router secret. */
export const routerSecretRequiredBody = {
  errors: [
    {
      message: 'This subgraph answers only the federation router: send the Router-Secret header.',
      extensions: { code: 'ROUTER_SECRET_REQUIRED' },
    },
  ],
};
