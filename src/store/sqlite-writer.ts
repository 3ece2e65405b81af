// The main thread's side of the SQLite writer thread (sqlite-writer-thread.ts): batches go there,
// their rows come back. The main thread keeps its own connection for reads; WAL lets both work at
// once, and the writer's fsync no longer stalls every other request.
import { Worker } from 'node:worker_threads';

/** Main thread → writer thread. */
export type WriterRequest = { type: 'write'; id: number; rows: (string | null)[][] } | { type: 'close' };

/** Writer thread → main thread. */
export type WriterReply =
  | { type: 'ready' }
  | { type: 'written'; id: number; seqs: (number | null)[] }
  | { type: 'failed'; id: number; message: string; code: unknown; errcode: unknown };

/** A writer thread with its own connection to one SQLite file. */
export interface SqliteWriter {
  /** insertRows (sqlite-connection.ts) run in the writer thread. */
  write(rows: (string | null)[][]): Promise<(number | null)[]>;
  /** Closes the thread's connection and ends it; call once no write is outstanding. */
  close(): Promise<void>;
}

interface Outstanding {
  resolve(seqs: (number | null)[]): void;
  reject(error: Error): void;
}

/** Starts a writer thread on the SQLite file at `path`; resolves once its connection is open. */
export async function startSqliteWriter(path: string): Promise<SqliteWriter> {
  const outstanding = new Map<number, Outstanding>();
  let nextId = 0;
  let worker: Promise<Worker> | undefined;

  const settle = (reply: WriterReply) => {
    if (reply.type === 'ready') return;
    const waiting = outstanding.get(reply.id);
    outstanding.delete(reply.id);
    if (reply.type === 'written') waiting?.resolve(reply.seqs);
    else waiting?.reject(Object.assign(new Error(reply.message), { code: reply.code, errcode: reply.errcode }));
  };
  const start = () => {
    const started = spawn(path);
    started.then(
      (thread) => {
        let failure: unknown;
        thread.on('message', settle);
        thread.on('error', (error) => (failure = error));
        thread.on('exit', () => {
          // A thread that died (it should not) fails what it held; the next write starts another.
          worker = undefined;
          const error = new Error('The SQLite writer thread stopped', { cause: failure });
          for (const waiting of outstanding.values()) waiting.reject(error);
          outstanding.clear();
        });
      },
      () => (worker = undefined),
    );
    return started;
  };
  worker = start();
  await worker;

  return {
    async write(rows) {
      const thread = await (worker ??= start());
      const id = (nextId += 1);
      const written = new Promise<(number | null)[]>((resolve, reject) => outstanding.set(id, { resolve, reject }));
      // Referenced only while a write is out, so an idle store never keeps the process alive.
      thread.ref();
      thread.postMessage({ type: 'write', id, rows } satisfies WriterRequest);
      return written.finally(() => outstanding.size === 0 && thread.unref());
    },
    async close() {
      const thread = await worker?.catch(() => undefined);
      if (!thread) return;
      const exited = new Promise((resolve) => thread.once('exit', resolve));
      thread.postMessage({ type: 'close' } satisfies WriterRequest);
      await exited;
    },
  };
}

/** A new writer thread, resolved once it says its connection is open; rejected if it fails first. */
function spawn(path: string): Promise<Worker> {
  const thread = new Worker(new URL('./sqlite-writer-thread.ts', import.meta.url), { workerData: { path } });
  return new Promise((resolve, reject) => {
    const onMessage = (reply: WriterReply) => {
      if (reply.type !== 'ready') return;
      thread.off('error', reject).off('exit', onExit).off('message', onMessage);
      thread.unref();
      resolve(thread);
    };
    const onExit = (code: number) => reject(new Error(`The SQLite writer thread exited (${code}) before opening the store`));
    thread.on('message', onMessage).once('error', reject).once('exit', onExit);
  });
}
