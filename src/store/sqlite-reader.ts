// The main thread's side of the reader thread (sqlite-reader-worker.ts): each heavy read is a
// message there and its answer a message back, so the event loop only waits, never works, for it.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.ts';
import type { HeavyRead, SqliteReads } from './sqlite-reads.ts';

type Pending = PromiseWithResolvers<unknown>;

/** The heavy reads, answered by the reader thread. */
export type SqliteReader = { [K in HeavyRead]: (...args: Parameters<SqliteReads[K]>) => Promise<ReturnType<SqliteReads[K]>> } & {
  close(): Promise<void>;
};

/**
 * A reader thread on the database file at `path`, started on first use and again after a crash
 * (what it had in flight fails; the next read starts a new one).
 */
export function startSqliteReader(path: string, logger: Logger): SqliteReader {
  let worker: Worker | undefined;
  const pending = new Map<number, Pending>();
  let next = 0;
  let closed = false;

  const failAll = (error: Error) => {
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  };
  const start = (): Worker => {
    const started = new Worker(new URL('./sqlite-reader-worker.ts', import.meta.url), { workerData: { path } });
    started.on('message', ({ id, result, error }: { id: number; result?: unknown; error?: { name: string; message: string } }) => {
      const waiting = pending.get(id);
      pending.delete(id);
      if (pending.size === 0) started.unref();
      if (error) waiting?.reject(Object.assign(new Error(error.message), { name: error.name }));
      else waiting?.resolve(result);
    });
    started.on('error', (error) => {
      logger.error({ err: error }, 'the SQLite reader thread failed; the next read starts another');
      failAll(new Error('the SQLite reader thread failed'));
    });
    started.on('exit', () => {
      if (worker === started) worker = undefined;
      failAll(new Error('the SQLite reader thread stopped'));
    });
    return started;
  };
  const call =
    (method: HeavyRead) =>
    (...args: unknown[]) => {
      if (closed) return Promise.reject(new Error('The sqlite store is closed'));
      worker ??= start();
      const id = (next += 1);
      const waiting: Pending = Promise.withResolvers();
      pending.set(id, waiting);
      // Held while it has reads to answer; an idle reader must not keep the process alive.
      worker.ref();
      worker.postMessage({ id, method, args });
      return waiting.promise;
    };
  return {
    rowsOf: call('rowsOf'),
    rowOfSession: call('rowOfSession'),
    newestFirst: call('newestFirst'),
    daySums: call('daySums'),
    quarantinePage: call('quarantinePage'),
    quarantineUnreviewed: call('quarantineUnreviewed'),
    quarantineWithIds: call('quarantineWithIds'),
    async close() {
      closed = true;
      const stopping = worker;
      worker = undefined;
      await stopping?.terminate();
      failAll(new Error('The sqlite store is closed'));
    },
  } as SqliteReader;
}
