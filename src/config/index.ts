// loadConfig: the contract's variables, validated in one place, every problem reported at once.
import type { WebhookCredentials } from '../collection/signature.ts';
import { LOG_LEVELS, type LogLevel } from '../logger.ts';
import { Secret } from '../secret.ts';
import { readAuth, type AuthConfig } from './auth.ts';
import { readBank, type UpstreamConfig } from './bank.ts';
import { readNetwork, type NetworkConfig } from './network.ts';
import { integer, sourceOf, type Env, type Source } from './source.ts';

export type { UpstreamConfig };

export interface Config extends NetworkConfig, AuthConfig {
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
