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

/** A channel prefix no other suite uses, for Redis pub/sub (channels are global to a server). */
export function uniqueChannelPrefix(): string {
  return `test-${randomBytes(6).toString('hex')}:`;
}
