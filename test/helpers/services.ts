import { randomBytes } from 'node:crypto';

/**
 * The URL of an external service a suite needs (`DATABASE_URL`, `REDIS_URL`), or undefined to skip
 * it. Under `CI=true` a missing service is a failure, never a silent skip: CI must run every suite.
 */
export function serviceUrl(variable: 'DATABASE_URL' | 'REDIS_URL'): string | undefined {
  const url = process.env[variable]?.trim();
  if (url) return url;
  if (process.env.CI === 'true') {
    throw new Error(`${variable} is not set: CI=true requires it (.ci/run exports it)`);
  }
  return undefined;
}

/** The services suites may need, by the variable that locates each. */
const SERVICES = { DATABASE_URL: 'PostgreSQL', REDIS_URL: 'Redis' } as const;

/**
 * The one line to print when `env` leaves suites out: which services' tests are skipped, and why.
 * Undefined when none is (every URL set), and under CI=true, where a missing one fails instead.
 */
export function skippedServicesNotice(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  if (env.CI === 'true') return undefined;
  const unset = (Object.keys(SERVICES) as (keyof typeof SERVICES)[]).filter((variable) => !env[variable]?.trim());
  if (unset.length === 0) return undefined;
  return `${unset.map((variable) => SERVICES[variable]).join(' and ')} tests skipped: ${unset.join(' and ')} ${unset.length === 1 ? 'is' : 'are'} not set (docs/layout.md, "Developing")`;
}

/** A channel prefix no other suite uses, for Redis pub/sub (channels are global to a server). */
export function uniqueChannelPrefix(): string {
  return `test-${randomBytes(6).toString('hex')}:`;
}
