import { ConfigError, loadConfig } from '../../src/config/index.ts';

/** Every problem `loadConfig` reports for `env`, or none. */
export function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

/** A token issuer's settings, which the production rules require. */
export const ISSUER = {
  AUTH_JWKS_URL: 'https://issuer.test/.well-known/jwks.json',
  AUTH_ISSUER: 'https://issuer.test',
  AUTH_AUDIENCE: 'bank-subgraph',
};

/** The live bank's URLs and credentials. */
export const LIVE_BANK = {
  UPSTREAM_MODE: 'live',
  BANK_BASE_URL: 'https://api.bank.test/gw/',
  BANK_BILLING_URL: 'https://bills.bank.test/provipay/webapi',
  BANK_POSTING_URL: 'https://post.bank.test/postingrest',
  BANK_WALLET_URL: 'https://wallet.bank.test/api',
  BANK_COLLECTION_URL: 'https://collect.bank.test/vps/api/',
  BANK_API_TOKEN: 'tok-live-1',
  BANK_USERNAME: 'partner',
  BANK_PASSWORD: 'pw-live-1',
  BILLING_USERNAME: 'biller',
  BILLING_PASSWORD: 'pw-bill-1',
  POSTING_USERNAME: 'poster',
  POSTING_PASSWORD: 'pw-post-1',
  OAUTH_CLIENT_ID: 'client',
  OAUTH_CLIENT_SECRET: 'oauth-secret-1',
  WEBHOOK_CLIENT_ID: 'collector',
  WEBHOOK_CLIENT_SECRET: 'hook-secret-live-0001',
  WEBHOOK_ALLOWED_IPS: '203.0.113.0/24',
};
