// The SQLite writer thread: its own connection to the store's file, where each batch's transaction
// and fsync run without holding the main thread's event loop. Started by sqlite-writer.ts.
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { configureConnection, insertRows, prepareInsert } from './sqlite-connection.ts';
import type { WriterReply, WriterRequest } from './sqlite-writer.ts';

const port = parentPort!;
const database = new DatabaseSync((workerData as { path: string }).path);
configureConnection(database);
const insert = prepareInsert(database);

port.on('message', (request: WriterRequest) => {
  if (request.type === 'close') {
    database.close();
    port.close();
    return;
  }
  let reply: WriterReply;
  try {
    reply = { type: 'written', id: request.id, seqs: insertRows(database, insert, request.rows) };
  } catch (error) {
    const { message, code, errcode } = error as { message?: string; code?: unknown; errcode?: unknown };
    reply = { type: 'failed', id: request.id, message: String(message ?? error), code, errcode };
  }
  port.postMessage(reply);
});
port.postMessage({ type: 'ready' } satisfies WriterReply);
