import { IANAZone } from 'luxon';
import { sandboxCredentials } from './sandbox/credentials.ts';
import { Secret } from './secret.ts';

/** Where each area of the bank lives (`spec/bank-api.md`'s placeholders). */
export interface BankUrls {
  /** `{base_url}`: account area and OAuth authorize (ops 1-4). */
  base: string;
  /** `{gateway_url}`: OAuth token exchange (op 5). */
  gateway: string;
  /** `{billing_url}`, including `/provipay/webapi` (ops 6-7). */
  billing: string;
  /** `{posting_url}`, including `/postingrest` (op 13). */
  posting: string;
  /** `{wallet_url}` (ops 8-12). */
  wallet: string;
}

/** The credentials the subgraph itself presents to the bank, and the webhook's shared secret. */
export interface BankCredentials {
  apiToken: Secret;
  username: string;
  password: Secret;
  billingUsername: string;
  billingPassword: Secret;
  postingUsername: string;
  postingPassword: Secret;
  oauthClientId: string;
  oauthClientSecret: Secret;
}

export interface WebhookCredentials {
  clientId: string;
  clientSecret: Secret;
}

export type UpstreamMode = 'sandbox' | 'live';

export interface Config {
  port: number;
  host: string;
  /** `NODE_ENV=production`: no landing page, no introspection hints. */
  production: boolean;
  logLevel: LogLevel;
  upstream: {
    mode: UpstreamMode;
    /** Live URLs; `undefined` in sandbox mode, where the app starts the sandbox and uses its URLs. */
    urls: BankUrls | undefined;
    credentials: BankCredentials;
    timeoutMs: number;
    bankListTtlMs: number;
    /** IANA zone of the bank's local times (`tranDateTime`). */
    timezone: string;
  };
  webhook: WebhookCredentials;
  /** `sqlite:<path>`, `sqlite::memory:` or `postgres://…`; may hold a password, so a Secret. */
  storeUrl: Secret;
  /** `memory:` or `redis://…`; may hold a password, so a Secret. */
  pubsubUrl: Secret;
  routerSecret: Secret | undefined;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Thrown by `loadConfig` with every problem found, one per line; never holds a secret's value. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads and validates the configuration from `env` (the contract's variables). Reports every
 * problem at once in one ConfigError; `''` counts as unset. Never reads `process.env` itself and
 * never exits.
 */
export function loadConfig(env: Env): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };

  const mode = read('UPSTREAM_MODE') ?? 'sandbox';
  if (mode !== 'sandbox' && mode !== 'live') {
    problems.push(`UPSTREAM_MODE must be "sandbox" or "live"`);
  }
  const live = mode === 'live';

  // In live mode every credential must be given; in sandbox mode they default to the sandbox's.
  const credential = (name: string, sandboxValue: string): string => {
    const value = read(name);
    if (value !== undefined) return value;
    if (live) problems.push(`${name} is required when UPSTREAM_MODE=live`);
    return sandboxValue;
  };

  const credentials: BankCredentials = {
    apiToken: new Secret(credential('BANK_API_TOKEN', sandboxCredentials.apiToken)),
    username: credential('BANK_USERNAME', sandboxCredentials.username),
    password: new Secret(credential('BANK_PASSWORD', sandboxCredentials.password)),
    billingUsername: credential('BILLING_USERNAME', sandboxCredentials.billingUsername),
    billingPassword: new Secret(credential('BILLING_PASSWORD', sandboxCredentials.billingPassword)),
    postingUsername: credential('POSTING_USERNAME', sandboxCredentials.postingUsername),
    postingPassword: new Secret(credential('POSTING_PASSWORD', sandboxCredentials.postingPassword)),
    oauthClientId: credential('OAUTH_CLIENT_ID', sandboxCredentials.oauthClientId),
    oauthClientSecret: new Secret(credential('OAUTH_CLIENT_SECRET', sandboxCredentials.oauthClientSecret)),
  };
  const webhook: WebhookCredentials = {
    clientId: credential('WEBHOOK_CLIENT_ID', sandboxCredentials.webhookClientId),
    clientSecret: new Secret(credential('WEBHOOK_CLIENT_SECRET', sandboxCredentials.webhookClientSecret)),
  };

  const urls = live ? readBankUrls(read, problems) : undefined;

  const storeUrl = read('STORE_URL') ?? 'sqlite:./data/collections.db';
  if (!/^sqlite:.+/.test(storeUrl) && !/^postgres(ql)?:\/\/.+/.test(storeUrl)) {
    problems.push('STORE_URL must be sqlite:<path>, sqlite::memory: or postgres://…');
  }
  const pubsubUrl = read('PUBSUB_URL') ?? 'memory:';
  if (pubsubUrl !== 'memory:' && !/^rediss?:\/\/.+/.test(pubsubUrl)) {
    problems.push('PUBSUB_URL must be memory: or redis://…');
  }

  const timezone = read('BANK_TIMEZONE') ?? 'Africa/Lagos';
  if (!IANAZone.isValidZone(timezone)) {
    problems.push(`BANK_TIMEZONE must be an IANA time zone such as Africa/Lagos, got "${timezone}"`);
  }

  const logLevel = (read('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }

  const routerSecret = read('ROUTER_SECRET');
  const config: Config = {
    port: integer(read, problems, 'PORT', 4001, 0, 65_535),
    host: read('HOST') ?? '0.0.0.0',
    production: read('NODE_ENV') === 'production',
    logLevel: logLevel as LogLevel,
    upstream: {
      mode: live ? 'live' : 'sandbox',
      urls,
      credentials,
      timeoutMs: integer(read, problems, 'BANK_TIMEOUT_MS', 10_000, 1, 600_000),
      bankListTtlMs: integer(read, problems, 'BANK_LIST_TTL_S', 600, 0, 86_400) * 1000,
      timezone,
    },
    webhook,
    storeUrl: new Secret(storeUrl),
    pubsubUrl: new Secret(pubsubUrl),
    routerSecret: routerSecret === undefined ? undefined : new Secret(routerSecret),
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function readBankUrls(read: (name: string) => string | undefined, problems: string[]): BankUrls {
  const url = (name: string, fallback?: string): string => {
    const value = read(name) ?? fallback;
    if (value === undefined) {
      problems.push(`${name} is required when UPSTREAM_MODE=live`);
      return '';
    }
    if (!isHttpUrl(value)) problems.push(`${name} must be an absolute http(s) URL`);
    // A trailing slash would double up with the paths, which all start with one.
    return value.replace(/\/+$/, '');
  };
  const base = url('BANK_BASE_URL');
  return {
    base,
    gateway: url('BANK_GATEWAY_URL', base === '' ? undefined : base),
    billing: url('BANK_BILLING_URL'),
    posting: url('BANK_POSTING_URL'),
    wallet: url('BANK_WALLET_URL'),
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function integer(
  read: (name: string) => string | undefined,
  problems: string[],
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = read(name);
  if (raw === undefined) return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    return fallback;
  }
  return value;
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
