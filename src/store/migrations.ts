import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../logger.ts';

/** One versioned schema change, read from `NNN_name.sql`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** The tables it creates. */
  tables: string[];
}

/** What a backend gives the shared runner; `schema_migrations (version, name, applied_at)` is its record. */
export interface MigrationTarget {
  /** Runs `work` holding a lock that keeps other processes from migrating at the same time. */
  withLock<T>(work: () => Promise<T>): Promise<T>;
  /** Creates `schema_migrations` when missing. */
  ensureTable(): Promise<void>;
  /** The migrations recorded, by version: each one's name. */
  applied(): Promise<Map<number, string>>;
  /** Runs the migration and records it in one transaction; false when another process had applied it. */
  apply(migration: Migration): Promise<boolean>;
  /** Those of `tables` the database does not have. */
  missingTables(tables: readonly string[]): Promise<string[]>;
}

const FILE_NAME = /^(\d+)_([a-z0-9_]+)\.sql$/;
const CREATE_TABLE = /^CREATE TABLE (?:IF NOT EXISTS )?(\w+)/gim;

/** The migrations of one backend, `<kind>` being the folder beside this file, ordered by version. */
export async function loadMigrations(kind: 'sqlite' | 'postgres'): Promise<Migration[]> {
  const directory = join(import.meta.dirname, 'migrations', kind);
  const migrations: Migration[] = [];
  for (const file of await readdir(directory)) {
    const match = FILE_NAME.exec(file);
    if (!match) continue;
    const sql = await readFile(join(directory, file), 'utf8');
    const tables = [...sql.matchAll(CREATE_TABLE)].map((table) => table[1]!);
    migrations.push({ version: Number(match[1]), name: match[2] ?? file, sql, tables });
  }
  migrations.sort((a, b) => a.version - b.version);
  const versions = new Set(migrations.map((migration) => migration.version));
  if (versions.size !== migrations.length) throw new Error(`Two ${kind} migrations share a version number`);
  return migrations;
}

/**
 * A store made by a pre-release build: its recorded migrations are not this release's under the same
 * numbers (made before the schema was gathered into one migration), or lack a table this release's
 * make (made before the quarantine). Nothing upgrades it.
 */
export class UnknownStoreSchemaError extends Error {
  /** `difference`: what sets the store apart, said of "its schema_migrations" or "its version N". */
  constructor(difference: string) {
    super(
      `this store was made by a pre-release build of bank-subgraph (${difference}), and this release cannot upgrade it. ` +
        'Point STORE_URL at a new, empty database (or SQLite file); to keep the notifications stored there, copy them out first ' +
        '(docs/operations.md, "Archiving old notifications").',
    );
    this.name = 'UnknownStoreSchemaError';
  }
}

/**
 * Applies, in order and each once, the migrations the database has not recorded; returns those
 * applied. Refuses a store whose recorded migrations carry other names than this release's.
 */
export async function runMigrations(target: MigrationTarget, migrations: readonly Migration[], logger: Logger): Promise<Migration[]> {
  return target.withLock(async () => {
    await target.ensureTable();
    const applied = await target.applied();
    for (const migration of migrations) {
      const recorded = applied.get(migration.version);
      if (recorded !== undefined && recorded !== migration.name) {
        throw new UnknownStoreSchemaError(
          `its schema_migrations records "${recorded}" as version ${migration.version}, where this release has "${migration.name}"`,
        );
      }
      const missing = recorded === undefined ? [] : await target.missingTables(migration.tables);
      if (missing.length > 0) {
        throw new UnknownStoreSchemaError(
          `its version ${migration.version}, "${recorded}", has no ${missing.join(', ')}, which this release's makes`,
        );
      }
    }
    const known = new Set(migrations.map((migration) => migration.version));
    const unknown = [...applied.keys()].filter((version) => !known.has(version));
    if (unknown.length > 0) {
      // A newer release migrated this database; its changes are additive, so this one can still run.
      logger.warn({ versions: unknown }, 'the store has migrations this release does not know');
    }
    const done: Migration[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      if (await target.apply(migration)) {
        logger.debug({ version: migration.version, name: migration.name }, 'applied store migration');
        done.push(migration);
      }
    }
    // One line, not one per migration: a new store's first lines say what runs, not its schema's history.
    if (done.length > 0) {
      const versions = done.map((migration) => migration.version);
      logger.info(
        { versions, names: done.map((migration) => migration.name) },
        applied.size === 0
          ? `created the store's schema (migrations ${versions[0]} to ${versions.at(-1)})`
          : `applied store migrations ${versions.join(', ')}`,
      );
    }
    return done;
  });
}
