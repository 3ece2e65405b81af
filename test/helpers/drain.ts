import { once } from 'node:events';
import { connect } from 'node:net';
import { onCleanup } from './cleanup.ts';

/** A request begun on a connection of its own and finished later, to see what the edge answers it then. */
export interface BegunRequest {
  /** Ends the headers and sends `body`; resolves to everything the server wrote once the connection closes. */
  finish(body?: string): Promise<string>;
}

/**
 * Opens a connection and sends `head` (a request line and headers) without the blank line that ends
 * it: the server is inside a request, so the drain does not close the connection as idle, and nothing
 * serves it yet. Finished during the drain, its answer proves the server has read whatever reached it
 * before the rest was sent (it reads ready sockets in the order they became ready): the test's
 * positive sign that bytes written earlier on another connection were handled.
 */
export async function beginRequest(port: number, head: string): Promise<BegunRequest> {
  const socket = connect(port, '127.0.0.1');
  onCleanup(async () => void socket.destroy());
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  const closed = once(socket, 'close');
  await new Promise((resolve) => socket.write(head.replace(/(\r\n)*$/, '\r\n'), resolve));
  return {
    async finish(body = '') {
      socket.write(`\r\n${body}`);
      await closed;
      return received;
    },
  };
}
