/**
 * A production start on the sandbox bank, as a demo deployment would make it: the mode chosen on
 * purpose and the webhook's own credentials (made-up test values, not the sandbox's published ones).
 */
export const PRODUCTION_SANDBOX = {
  NODE_ENV: 'production',
  UPSTREAM_MODE: 'sandbox',
  WEBHOOK_CLIENT_ID: 'demo-collector',
  WEBHOOK_CLIENT_SECRET: 'demo-webhook-secret-not-real',
} as const;
