// loadConfig: the contract's variables, validated in one place (the zod schema of schema.ts), every
// problem reported at once.
import type { z } from 'zod';
import type { AuthSettings } from '../auth/authenticator.ts';
import type { CallbackUrls } from '../callback-urls.ts';
import type { WebhookCredentials } from '../collection/signature.ts';
import type { IpRange } from '../ip-ranges.ts';
import type { LogLevel } from '../logger.ts';
import { Secret } from '../secret.ts';
import type { BankCredentials, BankUrls } from '../upstream/types.ts';
import { withoutEmpty, type Env } from './fields.ts';
import { ANY_SOURCE_WARNING, type CorsOrigins, type TrustProxy } from './network.ts';
import { closedBy, variablesOf } from './schema.ts';
import { weakSecrets } from './secrets.ts';

export {
  DEFAULT_MAX_OPERATION_COST,
  DEFAULT_QUARANTINE_MAX_BYTES,
  DEFAULT_QUARANTINE_MAX_ROWS,
  DEFAULT_WEBHOOK_MAX_BODY_BYTES,
} from './schema.ts';

/** What both modes share: the credentials we present, time-outs and the bank's zone. */
interface UpstreamSettings {
  credentials: BankCredentials;
  timeoutMs: number;
  bankListTtlMs: number;
  /** `BANK_LIST_STALE_S`: how long past its freshness a reference list may answer a failed refresh; 0: never. */
  bankListStaleMs: number;
  /** IANA zone of the bank's local times (`tranDateTime`). */
  timezone: string;
}

/**
 * The bank we talk to. In sandbox mode the app starts the in-process sandbox and uses its URLs, so
 * only live mode carries URLs; the union lets the compiler see that.
 */
export type UpstreamConfig = (UpstreamSettings & { mode: 'sandbox' }) | (UpstreamSettings & { mode: 'live'; urls: BankUrls });

export interface Config {
  port: number;
  host: string;
  /**
   * The sandbox rules: the bank is the in-process sandbox and NODE_ENV is not production. Only then
   * may a default open a door (no authentication, any CORS origin or callback URL, introspection and
   * the Sandbox landing page, a memory store, the development key); everywhere else they are closed.
   */
  sandboxRules: boolean;
  logLevel: LogLevel;
  upstream: UpstreamConfig;
  webhook: WebhookCredentials;
  /** `sqlite:<path>`, `sqlite::memory:` or `postgres://…`; may hold a password, so a Secret. */
  storeUrl: Secret;
  /** `memory:` or `redis://…`; may hold a password, so a Secret. */
  pubsubUrl: Secret;
  routerSecret: Secret | undefined;
  /** `MAX_OPERATION_COST`: the most bank calls one GraphQL operation may cost (estimated, then counted). */
  maxOperationCost: number;
  /** `PUBLISH_ACCESS_DIRECTIVES`: whether the published SDL carries `@authenticated` / `@requiresScopes` (enforced here either way). */
  publishAccessDirectives: boolean;
  /** `SUBSCRIPTION_KEEPALIVE_MS`: how often each graphql-ws socket is pinged; one silent until the next ping is ended. */
  subscriptionKeepAliveMs: number;
  /** `QUARANTINE_MAX_ROWS`: how many quarantined deliveries may await review; past it, a delivery to keep is answered `03`. */
  quarantineMaxRows: number;
  /** `QUARANTINE_MAX_BYTES`: how many bytes of raw bodies the unreviewed quarantine may hold; past it, as past the rows. */
  quarantineMaxBytes: number;
  /** `COLLECTION_CONFIRMATION` and `CONFIRMATION_CONCURRENCY`: whether, and how many at once, stored notifications are confirmed with the bank. */
  confirmation: ConfirmationConfig;
  /** What the configuration accepts although it opens a door (`WEBHOOK_ALLOWED_IPS=any`): the app logs each at start. */
  warnings: readonly string[];
  /**
   * `WEBHOOK_ALLOWED_IPS`: where collection notifications may come from; `undefined` is anywhere
   * (unset under the sandbox rules, or `any` given on purpose).
   */
  webhookAllowedSources: readonly IpRange[] | undefined;
  /** `TRUST_PROXY`: whose `X-Forwarded-For` gives the client address (Fastify's `trustProxy`). */
  trustProxy: TrustProxy;
  /** `CORS_ORIGINS`: the origins `/graphql` answers cross-origin; `'any'` under the sandbox rules when unset. */
  corsOrigins: CorsOrigins;
  /** `AUTH_*`: undefined when authorization is off (no AUTH_JWKS_URL, under the sandbox rules only). */
  auth: AuthSettings | undefined;
  /** `SUBSCRIPTION_CALLBACK_URLS`: where the callback protocol may call back. */
  callbackUrls: CallbackUrls;
  /** `WEBHOOK_PORT`: the webhook's (and health's) own port, when set. */
  webhookPort: number | undefined;
  /** `WEBHOOK_MAX_BODY_BYTES`: the largest delivery body the webhook reads; past it, 413. */
  webhookMaxBodyBytes: number;
}

/** How stored notifications are confirmed with the bank's collection service (ops 15 to 17). */
export interface ConfirmationConfig {
  /** `COLLECTION_CONFIRMATION=on`: every stored notification is confirmed; off, each reads `UNCHECKED`. */
  enabled: boolean;
  /** `CONFIRMATION_CONCURRENCY`: confirmations in flight with the bank at once, per replica. */
  concurrency: number;
  /** `CONFIRMATION_NOT_FOUND_RECHECK_S` in ms: how far apart the two not-found answers that NOT_AT_BANK needs must be. */
  notFoundRecheckMs: number;
}

/** Thrown by `loadConfig` with every problem found, one per line; never holds a secret's value. */
export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * Reads and validates the configuration from `env` (the contract's variables). Reports every
 * problem at once in one ConfigError; `''` counts as unset. Never reads `process.env` itself and
 * never exits.
 */
export function loadConfig(env: Env): Config {
  const given = withoutEmpty(env);
  const closed = closedBy(given);
  const schema = variablesOf(given)
    // Checked even beside a missing variable, so that one report names them all.
    .superRefine(
      (_, ctx) =>
        weakSecrets(given, closed).forEach(({ name, problem }) => ctx.addIssue({ code: 'custom', path: [name], message: problem })),
      { when: () => true },
    )
    .transform((variables) => toConfig(variables, closed === undefined));
  return parsed(schema, given);
}

/** What the published SDL depends on, read as the server reads it (`npm run schema:print`). */
export function loadSchemaSettings(env: Env): { catalogueMaxAgeS: number; publishAccessDirectives: boolean } {
  const given = withoutEmpty(env);
  const { BANK_LIST_TTL_S, PUBLISH_ACCESS_DIRECTIVES } = parsed(
    variablesOf(given).pick({ BANK_LIST_TTL_S: true, PUBLISH_ACCESS_DIRECTIVES: true }),
    given,
  );
  return { catalogueMaxAgeS: BANK_LIST_TTL_S, publishAccessDirectives: PUBLISH_ACCESS_DIRECTIVES };
}

/** `env` through `schema`, or a ConfigError with a line per issue, each starting with its variable. */
function parsed<T>(schema: z.ZodType<T>, env: Env): T {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map(({ path, message }) => `${String(path[0])}${/^[:=]/.test(message) ? '' : ' '}${message}`));
}

/** The variables, valid, in the shape the app uses. */
function toConfig(v: z.output<ReturnType<typeof variablesOf>>, sandboxRules: boolean): Config {
  const secret = (value: string | undefined) => (value === undefined ? undefined : new Secret(value));
  const settings: UpstreamSettings = {
    credentials: {
      apiToken: new Secret(v.BANK_API_TOKEN),
      username: v.BANK_USERNAME,
      password: new Secret(v.BANK_PASSWORD),
      billingUsername: v.BILLING_USERNAME,
      billingPassword: new Secret(v.BILLING_PASSWORD),
      postingUsername: v.POSTING_USERNAME,
      postingPassword: new Secret(v.POSTING_PASSWORD),
      oauthClientId: v.OAUTH_CLIENT_ID,
      oauthClientSecret: new Secret(v.OAUTH_CLIENT_SECRET),
    },
    timeoutMs: v.BANK_TIMEOUT_MS,
    bankListTtlMs: v.BANK_LIST_TTL_S * 1000,
    bankListStaleMs: v.BANK_LIST_STALE_S * 1000,
    timezone: v.BANK_TIMEZONE,
  };
  // Live mode requires every URL but the gateway's (the base by default) and the collection service's.
  const base = v.BANK_BASE_URL!;
  const urls = {
    base,
    gateway: v.BANK_GATEWAY_URL ?? base,
    billing: v.BANK_BILLING_URL!,
    posting: v.BANK_POSTING_URL!,
    wallet: v.BANK_WALLET_URL!,
    collection: v.BANK_COLLECTION_URL,
  };
  const anySource = v.WEBHOOK_ALLOWED_IPS === 'any';
  return {
    port: v.PORT,
    host: v.HOST,
    sandboxRules,
    logLevel: v.LOG_LEVEL,
    upstream: v.UPSTREAM_MODE === 'live' ? { mode: 'live', urls, ...settings } : { mode: 'sandbox', ...settings },
    webhook: {
      clientId: v.WEBHOOK_CLIENT_ID,
      clientSecret: new Secret(v.WEBHOOK_CLIENT_SECRET),
      previousSecret: secret(v.WEBHOOK_CLIENT_SECRET_PREVIOUS),
    },
    storeUrl: new Secret(v.STORE_URL),
    pubsubUrl: new Secret(v.PUBSUB_URL),
    routerSecret: secret(v.ROUTER_SECRET),
    maxOperationCost: v.MAX_OPERATION_COST,
    publishAccessDirectives: v.PUBLISH_ACCESS_DIRECTIVES,
    subscriptionKeepAliveMs: v.SUBSCRIPTION_KEEPALIVE_MS,
    quarantineMaxRows: v.QUARANTINE_MAX_ROWS,
    quarantineMaxBytes: v.QUARANTINE_MAX_BYTES,
    confirmation: {
      enabled: v.COLLECTION_CONFIRMATION === 'on',
      concurrency: v.CONFIRMATION_CONCURRENCY,
      notFoundRecheckMs: v.CONFIRMATION_NOT_FOUND_RECHECK_S * 1000,
    },
    // `any` is accepted on purpose, and said out loud at start wherever it is written.
    warnings: anySource ? [ANY_SOURCE_WARNING] : [],
    webhookAllowedSources: v.WEBHOOK_ALLOWED_IPS === 'any' ? undefined : v.WEBHOOK_ALLOWED_IPS,
    trustProxy: v.TRUST_PROXY,
    corsOrigins: v.CORS_ORIGINS,
    auth:
      v.AUTH_JWKS_URL === undefined
        ? undefined
        : {
            jwksUrl: v.AUTH_JWKS_URL,
            issuer: v.AUTH_ISSUER,
            audience: v.AUTH_AUDIENCE,
            accountsClaim: v.AUTH_ACCOUNTS_CLAIM,
            keysMaxAgeMs: v.AUTH_JWKS_MAX_AGE_S * 1000,
            refuseDevelopmentKey: !sandboxRules,
          },
    callbackUrls: v.SUBSCRIPTION_CALLBACK_URLS,
    webhookPort: v.WEBHOOK_PORT,
    webhookMaxBodyBytes: v.WEBHOOK_MAX_BODY_BYTES,
  };
}

/** A URL with any password replaced, for log lines such as "store: postgres://app@db:5432/bank". */
export function describeUrl(url: Secret): string {
  const value = url.reveal();
  try {
    const parsed = new URL(value);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.protocol === 'sqlite:' ? value : parsed.toString();
  } catch {
    return value.split(':')[0] + ':…';
  }
}
