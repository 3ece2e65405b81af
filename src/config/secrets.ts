// Secrets as the production rules read them: a value left over from a template, or a webhook secret
// short enough to guess, is refused like a missing one, by name and never by value.
import type { Env } from './fields.ts';

/**
 * Every variable holding something that lets its holder act as us or as the bank: the webhook's
 * Client-Id and secrets (with them anyone can sign a delivery), the bank's credentials, and the
 * router secret. Where the production rules apply, none may read as a placeholder.
 */
export const SECRET_VARIABLES = [
  'WEBHOOK_CLIENT_ID',
  'WEBHOOK_CLIENT_SECRET',
  'WEBHOOK_CLIENT_SECRET_PREVIOUS',
  'BANK_API_TOKEN',
  'BANK_PASSWORD',
  'BILLING_PASSWORD',
  'POSTING_PASSWORD',
  'OAUTH_CLIENT_SECRET',
  'ROUTER_SECRET',
] as const;

/**
 * Every variable the production rules refuse as a placeholder: the secrets, and the names that go
 * with the bank's passwords and OAuth secret (a template's `changeme` there was never a real login either).
 */
export const CREDENTIAL_VARIABLES = [
  ...SECRET_VARIABLES,
  'BANK_USERNAME',
  'BILLING_USERNAME',
  'POSTING_USERNAME',
  'OAUTH_CLIENT_ID',
] as const;

/** The webhook's secrets, which the bank signs with: short ones are refused too. */
const WEBHOOK_SECRETS = new Set<string>(['WEBHOOK_CLIENT_SECRET', 'WEBHOOK_CLIENT_SECRET_PREVIOUS']);

/** The fewest characters a webhook secret may have where the production rules apply. */
export const WEBHOOK_SECRET_MIN_LENGTH = 16;

/**
 * What templates, examples and documentation put where a secret goes. A value that matches was never
 * set by anyone who knows the secret, and whoever reads the template can use it.
 */
const PLACEHOLDERS: readonly RegExp[] = [
  /^replace[-_ .]?me/i,
  /^change[-_ .]?(me|it)/i,
  /example/i,
  /placeholder/i,
  /^x{3,}(?![a-wyz0-9])/i,
  /^your[-_ .]/i,
  /^<.*>$/s,
  // A template variable nobody substituted: ${NAME}, {{ name }}.
  /^\$\{.*\}$/s,
  /^\{\{.*\}\}$/s,
  /^(todo|tbd|fixme)\b/i,
  // A word on its own, perhaps numbered: "secret", "Password1", "test-123".
  /^(secret|password|passw0rd|passwd|pass|pwd|token|dummy|default|test|sample|admin|letmein|qwerty)[-_ .]?\d*$/i,
  // Nothing but dots, stars, dashes or an ellipsis: a value left out.
  /^[.*…_-]+$/,
];

/** Whether `value` reads as a placeholder rather than a secret, whatever its case. */
export function readsAsPlaceholder(value: string): boolean {
  return PLACEHOLDERS.some((pattern) => pattern.test(value.trim()));
}

/**
 * Where the production rules apply (`closedBy` says why), the problem of each credential that reads
 * as a placeholder, and of a webhook secret shorter than WEBHOOK_SECRET_MIN_LENGTH: by name, never by value.
 */
export function weakSecrets(env: Env, closedBy: string | undefined): { name: string; problem: string }[] {
  if (closedBy === undefined) return [];
  return CREDENTIAL_VARIABLES.flatMap((name) => {
    const value = env[name];
    if (value === undefined) return [];
    if (readsAsPlaceholder(value)) {
      return [
        {
          name,
          problem: `reads as a placeholder (REPLACE-ME…, changeme, example, xxx…, <…>), refused when ${closedBy}: anyone who reads the template has it; set the real value`,
        },
      ];
    }
    // Counted in code points, as a person counts characters; none is lost, so none is mishandled.
    // oxlint-disable-next-line typescript/no-misused-spread
    if (WEBHOOK_SECRETS.has(name) && [...value].length < WEBHOOK_SECRET_MIN_LENGTH) {
      return [
        {
          name,
          problem: `is shorter than ${WEBHOOK_SECRET_MIN_LENGTH} characters, refused when ${closedBy}: whoever guesses it can sign a delivery; agree a longer one with the bank`,
        },
      ];
    }
    return [];
  });
}
