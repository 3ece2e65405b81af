// Migrating the PostgreSQL store: once, at start, on a connection of its own, one replica at a time.
import pg from 'pg';
import type { Logger } from '../logger.ts';
import { loadMigrations, runMigrations, type Migration, type MigrationTarget } from './migrations.ts';

// Migrations may rewrite tables: they get longer than a webhook's statement.
const MIGRATION_TIMEOUT_MS = 120_000;

// Fixed application key for pg_advisory_lock (one namespace per database).
const MIGRATION_LOCK_KEY = 7_314_001;

/** Applies the migrations not yet applied; answers the store's identity and the database's own `synchronous_commit`. */
export async function migrate(
  url: string,
  settings: pg.ClientConfig,
  logger: Logger,
): Promise<{ identity: string; synchronousCommit: string | undefined }> {
  const client = new pg.Client({
    connectionString: url,
    ...settings,
    statement_timeout: MIGRATION_TIMEOUT_MS,
    query_timeout: MIGRATION_TIMEOUT_MS + 5_000,
  });
  // Failures surface through the awaited calls below; this only keeps a late socket error from crashing.
  client.on('error', (error) => logger.warn({ err: error }, 'the PostgreSQL migration connection failed'));
  await client.connect();
  try {
    await runMigrations(migrationTarget(client), await loadMigrations('postgres'), logger);
    const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    const identity = await client.query<{ id: string }>('SELECT id FROM store_identity');
    return { identity: String(identity.rows[0]?.id), synchronousCommit: rows[0]?.synchronous_commit };
  } finally {
    await client.end();
  }
}

function migrationTarget(client: pg.Client): MigrationTarget {
  return {
    // Replicas starting together queue here; the first migrates, the others find nothing left to do.
    async withLock(work) {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      try {
        return await work();
      } finally {
        // Ending the session releases the lock too, so a failed unlock changes nothing.
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
      }
    },
    async ensureTable() {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
    },
    async applied() {
      const result = await client.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations');
      return new Map(result.rows.map((row) => [row.version, row.name]));
    },
    async missingTables(tables) {
      // to_regclass reads the search_path, as every statement of the store does.
      const result = await client.query<{ name: string }>('SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(name) IS NULL', [
        tables,
      ]);
      return result.rows.map((row) => row.name);
    },
    async apply(migration: Migration) {
      await client.query('BEGIN');
      try {
        const recorded = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
        if (recorded.rowCount === 0) {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        }
        await client.query('COMMIT');
        return recorded.rowCount === 0;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    },
  };
}
