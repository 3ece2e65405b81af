import { bearer, TEST_ISSUER, TestIssuer, writeJwksFile } from './tokens.ts';

/** The issuer of production tests' tokens, its JWKS in a file. */
const productionIssuer = await TestIssuer.create();

/**
 * A production start on the sandbox bank, as a demo deployment would make it: the mode chosen on
 * purpose, the webhook's own credentials (made-up test values, not the sandbox's published ones),
 * and the token issuer's keys (the test's own).
 */
export const PRODUCTION_SANDBOX = {
  NODE_ENV: 'production',
  UPSTREAM_MODE: 'sandbox',
  WEBHOOK_CLIENT_ID: 'demo-collector',
  WEBHOOK_CLIENT_SECRET: 'demo-webhook-secret-not-real',
  AUTH_JWKS_URL: writeJwksFile(productionIssuer),
  AUTH_ISSUER: TEST_ISSUER,
} as const;

/** Every scope the contract names: a caller of production tests that may read everything. */
export const EVERY_SCOPE = 'accounts:read kyc:read collections:read:all merchant:auth transactions:authorize';

/** Authorization headers with a token of PRODUCTION_SANDBOX's issuer granting every scope. */
export async function productionHeaders(): Promise<Record<string, string>> {
  return bearer(await productionIssuer.sign({ scope: EVERY_SCOPE }));
}
