import type { Logger } from '../logger.ts';
import type { BatchOptions } from './batch.ts';
import { createPostgresStore } from './postgres.ts';
import { openSqliteStore } from './sqlite.ts';
import type { CollectionStore, NotificationStore } from './types.ts';

export { UnstorableNotificationError } from './batch.ts';
export type { CollectionStore, InsertResult, NotificationStore, QuarantineStore } from './types.ts';

type StoreKind = NotificationStore['kind'];

/**
 * A store that could not be opened or migrated. Its message names the kind and the reason, never the
 * URL or its password; it keeps no `cause`, since a driver's error may carry the URL in a property.
 */
export class StoreOpenError extends Error {
  readonly kind: StoreKind;
  /** The driver's code when it gave one (`ECONNREFUSED`, PostgreSQL's `28P01`, `ERR_SQLITE_ERROR`). */
  readonly code: string | undefined;

  constructor(kind: StoreKind, reason: unknown, secrets: readonly string[]) {
    const code = codeOf(reason);
    const detail = redact(reason instanceof Error ? reason.message : String(reason), secrets);
    super(`Could not open the ${kind} store${code ? ` (${code})` : ''}: ${detail}`);
    this.name = 'StoreOpenError';
    this.kind = kind;
    this.code = code;
  }
}

/**
 * Opens the store `url` names (`sqlite:<path>`, `sqlite::memory:`, `postgres://…`) and migrates it
 * before resolving. A relative SQLite path is relative to the working directory; missing directories
 * are created.
 */
export async function createNotificationStore(url: string, options: BatchOptions & { logger: Logger }): Promise<CollectionStore> {
  const kind = kindOf(url);
  const logger = options.logger.child({ store: kind });
  try {
    return kind === 'sqlite'
      ? await openSqliteStore(url.slice('sqlite:'.length), { ...options, logger })
      : await createPostgresStore(url, { ...options, logger });
  } catch (error) {
    throw new StoreOpenError(kind, error, secretsOf(url));
  }
}

function kindOf(url: string): StoreKind {
  if (/^sqlite:./.test(url)) return 'sqlite';
  if (/^postgres(ql)?:\/\/./.test(url)) return 'postgres';
  throw new Error('Unsupported store URL: expected sqlite:<path>, sqlite::memory: or postgres://…');
}

/** The strings an error message must not repeat: the URL and its password, raw and decoded. */
function secretsOf(url: string): string[] {
  const secrets = [url];
  try {
    const { password } = new URL(url);
    if (password) secrets.push(password, decodeURIComponent(password));
  } catch {
    // Not a parseable URL: the whole of it is already on the list.
  }
  return secrets;
}

function redact(text: string, secrets: readonly string[]): string {
  // Longest first, so the URL is replaced whole before its password is looked for.
  const ordered = [...secrets].filter((secret) => secret !== '').sort((a, b) => b.length - a.length);
  return ordered.reduce((result, secret) => result.split(secret).join('[redacted]'), text);
}

function codeOf(reason: unknown): string | undefined {
  const code = (reason as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[\w-]{1,40}$/.test(code) ? code : undefined;
}
