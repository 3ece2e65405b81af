import { bearer, TEST_AUDIENCE, TEST_ISSUER, TestIssuer, writeJwksFile } from './tokens.ts';

/** The issuer of the tokens of tests run under the production rules, its JWKS in a file. */
const productionIssuer = await TestIssuer.create();

/**
 * The token settings the production rules require (a live bank, or NODE_ENV=production): the
 * issuer's keys (the test's own), its `iss` and the audience.
 */
export const TEST_AUTH = {
  AUTH_JWKS_URL: writeJwksFile(productionIssuer),
  AUTH_ISSUER: TEST_ISSUER,
  AUTH_AUDIENCE: TEST_AUDIENCE,
} as const;

/**
 * Where the tests' deliveries come from: loopback. The production rules require the webhook's
 * allow-list, and a real one is what production runs.
 */
export const LOOPBACK_SOURCES = { WEBHOOK_ALLOWED_IPS: '127.0.0.1, ::1' } as const;

/**
 * A production start on the sandbox bank, as a demo deployment would make it: the mode chosen on
 * purpose, the webhook's own credentials (made-up test values, not the sandbox's published ones),
 * the tests' addresses as the webhook's sources, and the token issuer's settings.
 */
export const PRODUCTION_SANDBOX = {
  NODE_ENV: 'production',
  UPSTREAM_MODE: 'sandbox',
  WEBHOOK_CLIENT_ID: 'demo-collector',
  WEBHOOK_CLIENT_SECRET: 'demo-webhook-secret-not-real',
  ...LOOPBACK_SOURCES,
  ...TEST_AUTH,
} as const;

/** Every scope the contract names: a caller of production tests that may read everything. */
export const EVERY_SCOPE = 'accounts:read kyc:read collections:read:all merchant:auth transactions:authorize';

/** Authorization headers with a token of TEST_AUTH's issuer granting every scope. */
export async function productionHeaders(): Promise<Record<string, string>> {
  return bearer(await productionIssuer.sign({ scope: EVERY_SCOPE, audience: TEST_AUDIENCE }));
}
