// The PostgreSQL runs' services: a schema of their own for each server process that stores (ours,
// and the PostgreSQL floor apart), and a Redis channel prefix of their own, so the bench never reads
// or disturbs anyone else's data on the same servers.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface IsolatedSchema {
  /** The schema's name, `bench_<random>`. */
  name: string;
  /** `databaseUrl` whose connections select the schema (through `options=-c search_path=…`). */
  url: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

export interface SharedServices {
  storeUrl: string;
  /** `memory:` without Redis. */
  pubsubUrl: string;
  channelPrefix: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/** A fresh schema `bench_<random>` in `databaseUrl`. */
export async function isolatedSchema(databaseUrl: string): Promise<IsolatedSchema> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  await onAdmin(databaseUrl, `CREATE SCHEMA ${schema}`);
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { name: schema, url: url.toString(), drop: () => onAdmin(databaseUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`) };
}

/** A fresh schema for our replicas, and a channel prefix of their own on `redisUrl` when given. */
export async function isolatedServices(databaseUrl: string, redisUrl: string | undefined): Promise<SharedServices> {
  const schema = await isolatedSchema(databaseUrl);
  return {
    storeUrl: schema.url,
    pubsubUrl: redisUrl ?? 'memory:',
    channelPrefix: `bench-${randomBytes(6).toString('hex')}:`,
    drop: schema.drop,
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
