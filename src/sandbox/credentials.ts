/**
 * The sandbox bank's credentials. They are the configuration defaults in `UPSTREAM_MODE=sandbox`, so
 * `npm start` needs no setup; the sandbox checks what it receives against exactly these values, so a
 * wrong configured value fails the way it would against the real bank. Not secrets: they open only
 * the in-process sandbox.
 */
export const sandboxCredentials = {
  apiToken: 'sandbox-api-token',
  username: 'sandbox-user',
  password: 'sandbox-password',
  billingUsername: 'sandbox-billing',
  billingPassword: 'sandbox-billing-password',
  postingUsername: 'sandbox-posting',
  postingPassword: 'sandbox-posting-password',
  oauthClientId: 'sandbox-oauth-client',
  oauthClientSecret: 'sandbox-oauth-secret',
  webhookClientId: 'sandbox-collection',
  webhookClientSecret: 'sandbox-webhook-secret',
} as const;
