import { randomBytes } from 'node:crypto';
import pg from 'pg';

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

/**
 * A PostgreSQL URL whose connections use a new, empty schema, so suites running in parallel never
 * see each other's tables. `drop()` removes the schema and everything in it.
 */
export async function isolatedPostgresUrl(databaseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A channel prefix no other suite uses, for Redis pub/sub (channels are global to a server). */
export function uniqueChannelPrefix(): string {
  return `test-${randomBytes(6).toString('hex')}:`;
}
