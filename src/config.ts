import { IANAZone } from 'luxon';
import { parseIpRange, parseIpRanges, type IpRange } from './ip-ranges.ts';
import type { WebhookCredentials } from './collection/signature.ts';
import { LOG_LEVELS, type LogLevel } from './logger.ts';
import { sandboxCredentials } from './sandbox/credentials.ts';
import { Secret } from './secret.ts';
import type { CorsOrigins } from './server/graphql.ts';
import type { TrustProxy } from './server/http-edge.ts';
import type { BankCredentials, BankUrls } from './upstream/types.ts';

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
export type UpstreamConfig =
  | (UpstreamSettings & { mode: 'sandbox' })
  | (UpstreamSettings & { mode: 'live'; urls: BankUrls });

export interface Config {
  port: number;
  host: string;
  /** `NODE_ENV=production`: no landing page, no introspection hints, and every default that would open a door refused. */
  production: boolean;
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
  /** `WEBHOOK_ALLOWED_IPS`: where collection notifications may come from; `undefined` is anywhere. */
  webhookAllowedSources: readonly IpRange[] | undefined;
  /** `TRUST_PROXY`: whose `X-Forwarded-For` gives the client address (Fastify's `trustProxy`). */
  trustProxy: TrustProxy;
  /** `CORS_ORIGINS`: the origins `/graphql` answers cross-origin; `'any'` outside production when unset. */
  corsOrigins: CorsOrigins;
}

/**
 * The README's first screen is estimated at 12 bank calls (a name enquiry, the categories, and the
 * bills of the 10 categories `@listSize` assumes) and spends 7 on the sandbox (the categories come
 * from a cache); 25 leaves room for a dozen more name enquiries, and still refuses the hundreds one
 * aliased query could otherwise make.
 */
export const DEFAULT_MAX_OPERATION_COST = 25;

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

/** The environment as each step sees it: `''` reads as unset, and every problem goes to one list. */
interface Source {
  read(name: string): string | undefined;
  problems: string[];
  /** `NODE_ENV=production`: settings that default to demo values must be given. */
  production: boolean;
}

/**
 * Reads and validates the configuration from `env` (the contract's variables). Reports every
 * problem at once in one ConfigError; `''` counts as unset. Never reads `process.env` itself and
 * never exits.
 */
export function loadConfig(env: Env): Config {
  const source: Source = {
    read(name) {
      const value = env[name]?.trim();
      return value === undefined || value === '' ? undefined : value;
    },
    problems: [],
    production: env.NODE_ENV?.trim() === 'production',
  };
  const routerSecret = source.read('ROUTER_SECRET');
  const config: Config = {
    // The bank first: its problems are the ones a first live deployment most often has.
    ...readBank(source),
    ...readStores(source),
    ...readServer(source),
    ...readNetwork(source),
    routerSecret: routerSecret === undefined ? undefined : new Secret(routerSecret),
    maxOperationCost: integer(source, 'MAX_OPERATION_COST', DEFAULT_MAX_OPERATION_COST, 1, 1_000_000),
  };
  if (source.problems.length > 0) throw new ConfigError(source.problems);
  return config;
}

/** Where to listen, and how to log. */
function readServer(source: Source): Pick<Config, 'port' | 'host' | 'production' | 'logLevel'> {
  const logLevel = (source.read('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    source.problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return {
    port: integer(source, 'PORT', 4001, 0, 65_535),
    host: source.read('HOST') ?? '0.0.0.0',
    production: source.production,
    logLevel: logLevel as LogLevel,
  };
}

/** Where webhook deliveries may come from, which proxies tell us the client's address, and CORS. */
function readNetwork(source: Source): Pick<Config, 'webhookAllowedSources' | 'trustProxy' | 'corsOrigins'> {
  const allowed = source.read('WEBHOOK_ALLOWED_IPS');
  let webhookAllowedSources: IpRange[] | undefined;
  if (allowed !== undefined) {
    const { ranges, invalid } = parseIpRanges(allowed);
    for (const entry of invalid) source.problems.push(`WEBHOOK_ALLOWED_IPS: "${entry}" is not an IP address or CIDR range`);
    if (ranges.length === 0 && invalid.length === 0) source.problems.push('WEBHOOK_ALLOWED_IPS lists no address');
    webhookAllowedSources = ranges;
  }
  return { webhookAllowedSources, trustProxy: readTrustProxy(source.read('TRUST_PROXY'), source), corsOrigins: readCorsOrigins(source) };
}

/**
 * `CORS_ORIGINS`: `*` or comma-separated origins. Unset, any origin outside production (Apollo
 * Sandbox and local apps), none in production: behind the router, a page an employee opens must
 * not read name enquiries through their browser.
 */
function readCorsOrigins(source: Source): CorsOrigins {
  const value = source.read('CORS_ORIGINS');
  if (value === undefined) return source.production ? [] : 'any';
  if (value === '*') return 'any';
  const origins = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const origin of origins) {
    if (!isOrigin(origin)) source.problems.push(`CORS_ORIGINS: "${origin}" is not an origin such as https://app.example.com (scheme, host and port only)`);
  }
  if (origins.length === 0) source.problems.push('CORS_ORIGINS lists no origin');
  return origins;
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function readTrustProxy(value: string | undefined, source: Source): TrustProxy {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of entries) {
    if (!PROXY_NAMES.has(entry) && parseIpRange(entry) === undefined) {
      source.problems.push(`TRUST_PROXY: "${entry}" is not true, a hop count, an IP address, a CIDR range, loopback, linklocal or uniquelocal`);
    }
  }
  return entries;
}

/** The bank: its mode, URLs (live only), our credentials, the webhook's, time-outs and zone. */
function readBank(source: Source): Pick<Config, 'upstream' | 'webhook'> {
  const given = source.read('UPSTREAM_MODE');
  // In production the bank is chosen on purpose: a forgotten setting must not start the sandbox.
  if (given === undefined && source.production) {
    source.problems.push('UPSTREAM_MODE is required when NODE_ENV=production: "live" (or "sandbox" for a demo deployment)');
  }
  const mode = given ?? 'sandbox';
  if (mode !== 'sandbox' && mode !== 'live') {
    source.problems.push(`UPSTREAM_MODE must be "sandbox" or "live"`);
  }
  const live = mode === 'live';
  const credentials = readBankCredentials(source, live);
  const webhook = readWebhookCredentials(source, live);
  const urls = live ? readBankUrls(source) : undefined;

  const timezone = source.read('BANK_TIMEZONE') ?? 'Africa/Lagos';
  if (!IANAZone.isValidZone(timezone)) {
    source.problems.push(`BANK_TIMEZONE must be an IANA time zone such as Africa/Lagos, got "${timezone}"`);
  }
  const settings: UpstreamSettings = {
    credentials,
    timeoutMs: integer(source, 'BANK_TIMEOUT_MS', 10_000, 1, 600_000),
    bankListTtlMs: integer(source, 'BANK_LIST_TTL_S', 600, 0, 86_400) * 1000,
    bankListStaleMs: integer(source, 'BANK_LIST_STALE_S', 86_400, 0, 2_592_000) * 1000,
    timezone,
  };
  const upstream: UpstreamConfig = urls ? { mode: 'live', urls, ...settings } : { mode: 'sandbox', ...settings };
  return { upstream, webhook };
}

/**
 * The credentials we present to the bank. In live mode every one must be given; in sandbox mode they
 * default to the sandbox's, so `npm start` needs no setup (they open only the in-process sandbox).
 */
function readBankCredentials(source: Source, live: boolean): BankCredentials {
  const credential = (name: string, sandboxValue: string): string => {
    const value = source.read(name);
    if (value !== undefined) return value;
    if (live) source.problems.push(`${name} is required when UPSTREAM_MODE=live`);
    return sandboxValue;
  };
  const secret = (name: string, sandboxValue: string) => new Secret(credential(name, sandboxValue));
  return {
    apiToken: secret('BANK_API_TOKEN', sandboxCredentials.apiToken),
    username: credential('BANK_USERNAME', sandboxCredentials.username),
    password: secret('BANK_PASSWORD', sandboxCredentials.password),
    billingUsername: credential('BILLING_USERNAME', sandboxCredentials.billingUsername),
    billingPassword: secret('BILLING_PASSWORD', sandboxCredentials.billingPassword),
    postingUsername: credential('POSTING_USERNAME', sandboxCredentials.postingUsername),
    postingPassword: secret('POSTING_PASSWORD', sandboxCredentials.postingPassword),
    oauthClientId: credential('OAUTH_CLIENT_ID', sandboxCredentials.oauthClientId),
    oauthClientSecret: secret('OAUTH_CLIENT_SECRET', sandboxCredentials.oauthClientSecret),
  };
}

/**
 * What the bank signs its deliveries with. A `00` means we own the transfer, so in production (and
 * in live mode) these must be given, and the sandbox's published values, which anyone can read in
 * the README, are refused there: with them, anyone could sign a forged notification.
 */
function readWebhookCredentials(source: Source, live: boolean): WebhookCredentials {
  const published = new Set<string>([sandboxCredentials.webhookClientId, sandboxCredentials.webhookClientSecret]);
  const read = (name: string, sandboxValue: string | undefined): string | undefined => {
    const value = source.read(name);
    if (value === undefined && sandboxValue !== undefined && (live || source.production)) {
      source.problems.push(`${name} is required when ${live ? 'UPSTREAM_MODE=live' : 'NODE_ENV=production'}`);
    } else if (value !== undefined && source.production && published.has(value)) {
      source.problems.push(`${name} is the sandbox's published value, refused when NODE_ENV=production: set the one agreed with the bank`);
    }
    return value ?? sandboxValue;
  };
  const clientId = read('WEBHOOK_CLIENT_ID', sandboxCredentials.webhookClientId)!;
  const clientSecret = read('WEBHOOK_CLIENT_SECRET', sandboxCredentials.webhookClientSecret)!;
  const previous = read('WEBHOOK_CLIENT_SECRET_PREVIOUS', undefined);
  if (previous !== undefined && previous === clientSecret) {
    source.problems.push('WEBHOOK_CLIENT_SECRET_PREVIOUS must differ from WEBHOOK_CLIENT_SECRET (the old secret during a rotation; unset it once the bank uses the new one)');
  }
  return {
    clientId,
    clientSecret: new Secret(clientSecret),
    previousSecret: previous === undefined ? undefined : new Secret(previous),
  };
}

/** The live bank's URLs, each required (the gateway defaults to the base) and absolute http(s). */
function readBankUrls(source: Source): BankUrls {
  const url = (name: string, fallback?: string): string => {
    const value = source.read(name) ?? fallback;
    if (value === undefined) {
      source.problems.push(`${name} is required when UPSTREAM_MODE=live`);
      return '';
    }
    if (!isHttpUrl(value)) source.problems.push(`${name} must be an absolute http(s) URL`);
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

/** Where notifications are kept and how they fan out. */
function readStores(source: Source): Pick<Config, 'storeUrl' | 'pubsubUrl'> {
  const storeUrl = source.read('STORE_URL') ?? 'sqlite:./data/collections.db';
  if (!/^sqlite:.+/.test(storeUrl) && !/^postgres(ql)?:\/\/.+/.test(storeUrl)) {
    source.problems.push('STORE_URL must be sqlite:<path>, sqlite::memory: or postgres://…');
  }
  const pubsubUrl = source.read('PUBSUB_URL') ?? 'memory:';
  if (pubsubUrl !== 'memory:' && !/^rediss?:\/\/.+/.test(pubsubUrl)) {
    source.problems.push('PUBSUB_URL must be memory: or redis://…');
  }
  return { storeUrl: new Secret(storeUrl), pubsubUrl: new Secret(pubsubUrl) };
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function integer(source: Source, name: string, fallback: number, min: number, max: number): number {
  const raw = source.read(name);
  if (raw === undefined) return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    source.problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
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
