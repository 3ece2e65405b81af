// The contract's variables as one zod object, a line each. Which rules apply is decided first, from
// NODE_ENV and UPSTREAM_MODE (closedBy); then every line carries the rule it gets. Problems come in
// this order: the bank first, whose settings a first live deployment most often gets wrong.
import { isIP } from 'node:net';
import { IANAZone } from 'luxon';
import { z } from 'zod';
import { DEVELOPMENT_JWKS_PATH } from '../auth/development-key.ts';
import { jwksFilePath } from '../auth/key-set.ts';
import { parseCallbackPrefix, type CallbackUrls } from '../callback-urls.ts';
import { LOG_LEVELS } from '../logger.ts';
import { sandboxCredentials as sandboxes } from '../sandbox/credentials.ts';
import { baseUrl, bool, entries, isHttpUrl, oneOf, quotable, required, text, whole, type Env } from './fields.ts';
import { allowedSources, corsOrigins, trustProxy } from './network.ts';

/**
 * Room for the README's first screen (a name enquiry, the bill categories and their bills) and a
 * dozen more name enquiries, while one aliased document that would fan out into hundreds of bank
 * calls is refused; docs/schema.md prices the fields.
 */
export const DEFAULT_MAX_OPERATION_COST = 25;

/** Quarantined deliveries that may await review: a bad day's refusals many times over, far from what fills a disk. */
export const DEFAULT_QUARANTINE_MAX_ROWS = 100_000;

/** Bytes of raw bodies the unreviewed quarantine may hold: a thousand of the largest bodies the webhook ever read. */
export const DEFAULT_QUARANTINE_MAX_BYTES = 1024 * 1024 * 1024;

/** The largest body the webhook reads: the bank's notifications are under 2 KB, so 64 KiB is room to spare. */
export const DEFAULT_WEBHOOK_MAX_BODY_BYTES = 64 * 1024;

/**
 * Why the production rules apply (`UPSTREAM_MODE=live`, `NODE_ENV=production`), or undefined under
 * the sandbox rules: the bank is the in-process sandbox outside production, the one condition under
 * which a default may open a door.
 */
export function closedBy(env: Env): string | undefined {
  // Keyed on the bank first: a live bank gets the production rules whatever NODE_ENV says (staging,
  // unset, a typo), and so does a mode that is not "sandbox" at all (it is refused too).
  const mode = env.UPSTREAM_MODE ?? 'sandbox';
  if (mode !== 'sandbox') return `UPSTREAM_MODE=${mode}`;
  return env.NODE_ENV === 'production' ? 'NODE_ENV=production' : undefined;
}

const MODE = z.enum(['sandbox', 'live'], { error: 'must be "sandbox" or "live"' });

/** The sandbox's webhook pair, published in the README: with it, anyone could sign a delivery. */
const PUBLISHED = new Set<string>([sandboxes.webhookClientId, sandboxes.webhookClientSecret]);

/** The variables of `env` (trimmed, `''` dropped) as a zod object, each with the rules `env` calls for. */
export function variablesOf(env: Env) {
  const closed = closedBy(env);
  const sandbox = closed === undefined;
  const whenClosed = `when ${closed}`;
  const live = env.UPSTREAM_MODE === 'live';
  // What we present to the bank: the sandbox's by default, so `npm start` needs no setup; every one given for the live bank.
  const credential = (sandboxValue: string) => (live ? required('when UPSTREAM_MODE=live', text) : text.default(sandboxValue));
  // The webhook's pair is ours alone wherever the sandbox rules do not apply: a `00` tells the bank we own the transfer.
  const notPublished = text.refine(
    (value) => !PUBLISHED.has(value),
    `is the sandbox's published value, refused ${whenClosed}: set the one agreed with the bank`,
  );
  const webhookPair = (sandboxValue: string) => (sandbox ? text.default(sandboxValue) : required(whenClosed, notPublished));
  // Only the live bank has URLs (the sandbox serves its own); confirmation asks the collection service about every notification.
  const bankUrl = (needed = true) => (!live ? text.optional() : needed ? required('when UPSTREAM_MODE=live', baseUrl) : baseUrl.optional());
  const confirming = (env.COLLECTION_CONFIRMATION ?? 'on').toLowerCase() !== 'off';
  // Under the sandbox rules authorization may be off, but never half set: an issuer without keys checks nothing.
  const withJwks = env.AUTH_JWKS_URL !== undefined;
  const onlyWithJwks = (name: string) =>
    z
      .undefined({ error: `is set but AUTH_JWKS_URL is not, so no token would be checked: set AUTH_JWKS_URL too, or unset ${name}` })
      .optional();
  const allowList = env.WEBHOOK_ALLOWED_IPS !== undefined && env.WEBHOOK_ALLOWED_IPS.toLowerCase() !== 'any';
  return z.object({
    UPSTREAM_MODE:
      env.NODE_ENV === 'production'
        ? required('when NODE_ENV=production: "live" (or "sandbox" for a demo deployment)', MODE)
        : MODE.default('sandbox'),
    BANK_API_TOKEN: credential(sandboxes.apiToken),
    BANK_USERNAME: credential(sandboxes.username),
    BANK_PASSWORD: credential(sandboxes.password),
    BILLING_USERNAME: credential(sandboxes.billingUsername),
    BILLING_PASSWORD: credential(sandboxes.billingPassword),
    POSTING_USERNAME: credential(sandboxes.postingUsername),
    POSTING_PASSWORD: credential(sandboxes.postingPassword),
    OAUTH_CLIENT_ID: credential(sandboxes.oauthClientId),
    OAUTH_CLIENT_SECRET: credential(sandboxes.oauthClientSecret),
    WEBHOOK_CLIENT_ID: webhookPair(sandboxes.webhookClientId),
    WEBHOOK_CLIENT_SECRET: webhookPair(sandboxes.webhookClientSecret),
    WEBHOOK_CLIENT_SECRET_PREVIOUS: (sandbox ? text : notPublished)
      .refine(
        (value) => value !== (env.WEBHOOK_CLIENT_SECRET ?? sandboxes.webhookClientSecret),
        'must differ from WEBHOOK_CLIENT_SECRET (the old secret during a rotation; unset it once the bank uses the new one)',
      )
      .optional(),
    BANK_BASE_URL: bankUrl(),
    BANK_GATEWAY_URL: bankUrl(false),
    BANK_BILLING_URL: bankUrl(),
    BANK_POSTING_URL: bankUrl(),
    BANK_WALLET_URL: bankUrl(),
    BANK_COLLECTION_URL: bankUrl(confirming),
    BANK_TIMEOUT_MS: whole(1, 600_000).default(10_000),
    BANK_LIST_TTL_S: whole(0, 86_400).default(600),
    BANK_LIST_STALE_S: whole(0, 2_592_000).default(86_400),
    BANK_TIMEZONE: text
      .refine((zone) => IANAZone.isValidZone(zone), {
        error: (issue) => `must be an IANA time zone such as Africa/Lagos, got "${String(issue.input)}"`,
      })
      .default('Africa/Lagos'),
    STORE_URL: storeUrl(closed).default('sqlite:./data/collections.db'),
    PUBSUB_URL: text.refine((url) => url === 'memory:' || /^rediss?:\/\/.+/.test(url), 'must be memory: or redis://…').default('memory:'),
    PORT: whole(0, 65_535).default(4001),
    // The sandbox rules open doors: by default only this machine reaches them.
    HOST: text.default(sandbox ? '127.0.0.1' : '0.0.0.0'),
    LOG_LEVEL: oneOf(LOG_LEVELS, () => `must be one of ${LOG_LEVELS.join(', ')}`).default('info'),
    // The bank's signature is the same on every delivery, so whoever has seen one can sign their own: the source must be named.
    WEBHOOK_ALLOWED_IPS: sandbox
      ? allowedSources.optional()
      : required(
          `${whenClosed}: the bank's addresses or ranges (its signature is the same on every delivery, so whoever has seen one could sign their own), or "any" to accept every source on purpose`,
          allowedSources,
        ),
    TRUST_PROXY: trustProxy(allowList ? 'with WEBHOOK_ALLOWED_IPS' : sandbox ? undefined : whenClosed).default(false),
    // Behind the router, a page an employee opens must not read name enquiries through their browser.
    CORS_ORIGINS: corsOrigins.default(sandbox ? 'any' : []),
    // Outside the sandbox rules a forgotten setting must not serve money records to anyone, nor accept tokens minted for another API.
    AUTH_JWKS_URL: sandbox
      ? jwksUrl(closed).optional()
      : required(`${whenClosed}: where the token issuer publishes its keys (https://…/.well-known/jwks.json)`, jwksUrl(closed)),
    AUTH_ISSUER: !sandbox
      ? required(`${whenClosed}: the \`iss\` every token must carry`, text)
      : withJwks
        ? text.optional()
        : onlyWithJwks('AUTH_ISSUER'),
    AUTH_AUDIENCE: !sandbox
      ? required(
          `${whenClosed}: the \`aud\` every token must carry (without it, tokens the issuer mints for other APIs would be accepted)`,
          text,
        )
      : withJwks
        ? text.optional()
        : onlyWithJwks('AUTH_AUDIENCE'),
    AUTH_ACCOUNTS_CLAIM: text.default('accounts'),
    // A key withdrawn at the issuer stops working within this.
    AUTH_JWKS_MAX_AGE_S: whole(1, 86_400).default(600),
    // Unset outside the sandbox rules, the callback protocol is off: it would let a caller make us POST to any address of our network.
    SUBSCRIPTION_CALLBACK_URLS: text
      .transform((value, ctx): CallbackUrls =>
        entries(
          value,
          ctx,
          parseCallbackPrefix,
          (entry) => `: "${quotable(entry)}" is not an absolute http(s) URL without credentials, query or fragment`,
          'lists no URL',
        ),
      )
      .default(sandbox ? 'any' : []),
    WEBHOOK_PORT: whole(0, 65_535)
      .refine((port) => port === 0 || port !== Number(env.PORT ?? 4001), 'must differ from PORT: the webhook gets a port of its own')
      .optional(),
    ROUTER_SECRET: text.optional(),
    MAX_OPERATION_COST: whole(1, 1_000_000).default(DEFAULT_MAX_OPERATION_COST),
    PUBLISH_ACCESS_DIRECTIVES: bool.default(true),
    // graphql-ws's own default; a proxy in front that drops idle sockets sooner needs it shorter.
    SUBSCRIPTION_KEEPALIVE_MS: whole(100, 600_000).default(12_000),
    QUARANTINE_MAX_ROWS: whole(0, 100_000_000).default(DEFAULT_QUARANTINE_MAX_ROWS),
    QUARANTINE_MAX_BYTES: whole(0, Number.MAX_SAFE_INTEGER).default(DEFAULT_QUARANTINE_MAX_BYTES),
    // Below 1 KiB not even a bank notification fits; above 1 MiB one read of raw bodies within the budget outgrows a replica.
    WEBHOOK_MAX_BODY_BYTES: whole(1024, 1024 * 1024).default(DEFAULT_WEBHOOK_MAX_BODY_BYTES),
    COLLECTION_CONFIRMATION: oneOf(['on', 'off'], (given) => `must be "on" or "off", got "${given}"`).default('on'),
    CONFIRMATION_CONCURRENCY: whole(1, 256).default(16),
    // The sandbox bank's verify service never lags its notifier: a forged transfer reads NOT_AT_BANK in a second there.
    CONFIRMATION_NOT_FOUND_RECHECK_S: whole(1, 86_400).default(sandbox ? 1 : 30),
  });
}

/** `STORE_URL`; a store that forgets on restart is refused where the production rules apply: a `00` tells the bank we own the transfer. */
function storeUrl(closed: string | undefined) {
  const url = text.regex(/^sqlite:.+|^postgres(ql)?:\/\/.+/, 'must be sqlite:<path>, sqlite::memory: or postgres://…');
  if (closed === undefined) return url;
  return url.refine(
    (value) => value !== 'sqlite::memory:',
    `=sqlite::memory: is refused when ${closed}: every stored notification would be lost on a restart; use sqlite:<path> on a volume or postgres://…`,
  );
}

/** `AUTH_JWKS_URL`; where the production rules apply, neither over clear text to another host nor the published development keys. */
function jwksUrl(closed: string | undefined) {
  const location = text.refine((value) => isHttpUrl(value) || /^file:.+/.test(value), {
    error: 'must be an http(s) URL or file:<path> of a JWKS document',
    abort: true,
  });
  if (closed === undefined) return location;
  return (
    location
      // Keys fetched in clear text can be swapped on the way: anyone on the path could mint tokens.
      .refine(
        (value) => URL.parse(value)?.protocol !== 'http:' || isLoopbackUrl(value),
        `must be https:// (or file:, or http:// to a loopback address) when ${closed}`,
      )
      .refine(
        (value) => !value.startsWith('file:') || jwksFilePath(value) !== DEVELOPMENT_JWKS_PATH,
        `names the repository's published development keys, refused when ${closed}: point it at your token issuer's JWKS`,
      )
  );
}

function isLoopbackUrl(value: string): boolean {
  const host = new URL(value).hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
