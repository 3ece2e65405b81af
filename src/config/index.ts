// loadConfig: the contract's variables, validated in one place, every problem reported at once.
import type { WebhookCredentials } from '../collection/signature.ts';
import { LOG_LEVELS, type LogLevel } from '../logger.ts';
import { Secret } from '../secret.ts';
import { readAuth, type AuthConfig } from './auth.ts';
import { readBank, type UpstreamConfig } from './bank.ts';
import { readNetwork, type NetworkConfig } from './network.ts';
import { checkSecrets } from './secrets.ts';
import { boolean, integer, sandboxRules, sourceOf, type Env, type Source } from './source.ts';

export type { UpstreamConfig };

export interface Config extends NetworkConfig, AuthConfig {
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
}

/** How stored notifications are confirmed with the bank's collection service (ops 15 to 17). */
export interface ConfirmationConfig {
  /** `COLLECTION_CONFIRMATION=on`: every stored notification is confirmed; off, each reads `UNCHECKED`. */
  enabled: boolean;
  /** `CONFIRMATION_CONCURRENCY`: confirmations in flight with the bank at once, per replica. */
  concurrency: number;
}

/**
 * Room for the README's first screen (a name enquiry, the bill categories and their bills) and a
 * dozen more name enquiries, while one aliased document that would fan out into hundreds of bank
 * calls is refused; docs/benchmarks.md prices the screens it was chosen against.
 */
export const DEFAULT_MAX_OPERATION_COST = 25;

/** Quarantined deliveries that may await review: a bad day's refusals many times over, far from what fills a disk. */
export const DEFAULT_QUARANTINE_MAX_ROWS = 100_000;

/** Bytes of raw bodies the unreviewed quarantine may hold: a thousand of the largest bodies the webhook reads. */
export const DEFAULT_QUARANTINE_MAX_BYTES = 1024 * 1024 * 1024;

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
  const source = sourceOf(env);
  const routerSecret = source.read('ROUTER_SECRET');
  const config: Config = {
    // The bank first: its problems are the ones a first live deployment most often has.
    ...readBank(source),
    ...readStores(source),
    ...readServer(source),
    ...readNetwork(source),
    ...readAuth(source),
    routerSecret: routerSecret === undefined ? undefined : new Secret(routerSecret),
    maxOperationCost: integer(source, 'MAX_OPERATION_COST', DEFAULT_MAX_OPERATION_COST, 1, 1_000_000),
    publishAccessDirectives: readPublishAccessDirectives(source),
    // graphql-ws's own default; a proxy in front that drops idle sockets sooner needs it shorter.
    subscriptionKeepAliveMs: integer(source, 'SUBSCRIPTION_KEEPALIVE_MS', 12_000, 100, 600_000),
    quarantineMaxRows: integer(source, 'QUARANTINE_MAX_ROWS', DEFAULT_QUARANTINE_MAX_ROWS, 0, 100_000_000),
    quarantineMaxBytes: integer(source, 'QUARANTINE_MAX_BYTES', DEFAULT_QUARANTINE_MAX_BYTES, 0, Number.MAX_SAFE_INTEGER),
    confirmation: readConfirmation(source),
    warnings: source.warnings,
  };
  // Read where each belongs above; here, whether any that is given is a placeholder or too short.
  checkSecrets(source);
  if (source.problems.length > 0) throw new ConfigError(source.problems);
  return config;
}

/**
 * `PUBLISH_ACCESS_DIRECTIVES`: a gateway that refuses `for: SECURITY` features (@apollo/gateway)
 * composes the SDL without them; read by `npm run schema:print` too.
 */
export function readPublishAccessDirectives(source: Source): boolean {
  return boolean(source, 'PUBLISH_ACCESS_DIRECTIVES', true);
}

/** `COLLECTION_CONFIRMATION` (`on` or `off`) and `CONFIRMATION_CONCURRENCY`. */
export function readConfirmation(source: Source): ConfirmationConfig {
  const given = (source.read('COLLECTION_CONFIRMATION') ?? 'on').toLowerCase();
  if (given !== 'on' && given !== 'off') source.problems.push(`COLLECTION_CONFIRMATION must be "on" or "off", got "${given}"`);
  return { enabled: given !== 'off', concurrency: integer(source, 'CONFIRMATION_CONCURRENCY', 4, 1, 256) };
}

/** Where to listen, and how to log. */
function readServer(source: Source): Pick<Config, 'port' | 'host' | 'sandboxRules' | 'logLevel'> {
  const logLevel = (source.read('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    source.problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return {
    port: integer(source, 'PORT', 4001, 0, 65_535),
    // The sandbox rules open doors (no authentication, any CORS origin): by default only this machine reaches them.
    host: source.read('HOST') ?? (sandboxRules(source) ? '127.0.0.1' : '0.0.0.0'),
    sandboxRules: sandboxRules(source),
    logLevel: logLevel as LogLevel,
  };
}

/** Where notifications are kept and how they fan out. */
function readStores(source: Source): Pick<Config, 'storeUrl' | 'pubsubUrl'> {
  const storeUrl = source.read('STORE_URL') ?? 'sqlite:./data/collections.db';
  if (!/^sqlite:.+/.test(storeUrl) && !/^postgres(ql)?:\/\/.+/.test(storeUrl)) {
    source.problems.push('STORE_URL must be sqlite:<path>, sqlite::memory: or postgres://…');
  } else if (storeUrl === 'sqlite::memory:' && source.closedBy !== undefined) {
    // A `00` tells the bank we own the transfer: a store that forgets on restart would lose it.
    source.problems.push(`STORE_URL=sqlite::memory: is refused when ${source.closedBy}: every stored notification would be lost on a restart; use sqlite:<path> on a volume or postgres://…`);
  }
  const pubsubUrl = source.read('PUBSUB_URL') ?? 'memory:';
  if (pubsubUrl !== 'memory:' && !/^rediss?:\/\/.+/.test(pubsubUrl)) {
    source.problems.push('PUBSUB_URL must be memory: or redis://…');
  }
  return { storeUrl: new Secret(storeUrl), pubsubUrl: new Secret(pubsubUrl) };
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
