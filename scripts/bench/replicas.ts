// The second run's services: a PostgreSQL schema of its own and a Redis channel prefix of its own,
// so the bench never reads or disturbs anyone else's data on the same servers.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface SharedServices {
  storeUrl: string;
  pubsubUrl: string;
  channelPrefix: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/** A fresh schema in `databaseUrl` (connections select it through `options=-c search_path=…`). */
export async function isolatedServices(databaseUrl: string, redisUrl: string): Promise<SharedServices> {
  const suffix = randomBytes(6).toString('hex');
  const schema = `bench_${suffix}`;
  await onAdmin(databaseUrl, `CREATE SCHEMA ${schema}`);
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    storeUrl: url.toString(),
    pubsubUrl: redisUrl,
    channelPrefix: `bench-${suffix}:`,
    drop: () => onAdmin(databaseUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`),
  };
}

async function onAdmin(databaseUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
