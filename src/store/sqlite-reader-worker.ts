// The reader thread: the SQLite store's heavy reads on a read-only connection of their own, so no
// summary or page, however large, holds the event loop that answers the bank.
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { createSqliteReads, HEAVY_READS, type HeavyRead } from './sqlite-reads.ts';

const database = new DatabaseSync((workerData as { path: string }).path, { readOnly: true });
// The writer may hold the file's lock for a moment (a WAL checkpoint); wait rather than fail.
database.exec('PRAGMA busy_timeout = 5000');
const reads = createSqliteReads(database);
const allowed = new Set<string>(HEAVY_READS);

parentPort!.on('message', ({ id, method, args }: { id: number; method: HeavyRead; args: unknown[] }) => {
  try {
    if (!allowed.has(method)) throw new Error(`unknown read ${method}`);
    const result = (reads[method] as (...values: unknown[]) => unknown)(...args);
    parentPort!.postMessage({ id, result });
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    parentPort!.postMessage({ id, error: { name, message } });
  }
});
