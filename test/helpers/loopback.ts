import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onCleanup } from './cleanup.ts';

/**
 * Listens with `server` on a free loopback port and closes it, connections included, when the test
 * finishes; resolves to its origin, e.g. http://127.0.0.1:41234.
 */
export async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
