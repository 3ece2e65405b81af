// Where ours and the floors store in a bench run: a store of their own each, so the bench never reads
// or disturbs anyone else's data on the same servers, removed at the end.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

export type StoreKind = 'sqlite' | 'postgres';

/** What the PostgreSQL runs use, from DATABASE_URL and REDIS_URL. */
export interface Services {
  databaseUrl: string;
  redisUrl: string | undefined;
}

/**
 * The environment of ours: the sandbox bank, the given store and pub/sub, no logs, and a quarantine
 * that the refusals of webhook-02 never fill (past its bounds, a refusal is answered 03). Confirmation
 * with the bank is off: the in-process sandbox bank would answer each ask on ours' own event loop, and
 * its cost is measured on its own, against a bank in a process of its own (confirmation.ts).
 */
export const appEnv = (storeUrl: string, pubsubUrl: string): Record<string, string> => ({
  UPSTREAM_MODE: 'sandbox',
  STORE_URL: storeUrl,
  PUBSUB_URL: pubsubUrl,
  LOG_LEVEL: 'silent',
  QUARANTINE_MAX_ROWS: '100000000',
  QUARANTINE_MAX_BYTES: String(2 ** 50),
  COLLECTION_CONFIRMATION: 'off',
});

async function onAdmin(databaseUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A store of its own: a SQLite file in a new directory under `parentDir` (`dir` holds it), or a new
 * PostgreSQL schema, selected by the URL's search_path; `drop` removes it.
 */
export async function ownStore(
  kind: StoreKind,
  parentDir: string,
  databaseUrl?: string,
): Promise<{ storeUrl: string; dir: string; drop(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(parentDir, 'bank-subgraph-bench-'));
    return { storeUrl: `sqlite:${join(dir, 'collections.db')}`, dir, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  await onAdmin(databaseUrl!, `CREATE SCHEMA ${schema}`);
  const url = new URL(databaseUrl!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { storeUrl: url.toString(), dir: '', drop: () => onAdmin(databaseUrl!, `DROP SCHEMA IF EXISTS ${schema} CASCADE`) };
}
