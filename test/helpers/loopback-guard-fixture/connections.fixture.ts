// Run by test/loopback-guard.test.ts under the suite's configuration: each test below either stays on
// loopback or reaches past it, and the guard must fail exactly the second kind, naming where.
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import { expect, it } from 'vitest';

it('stays on loopback', async () => {
  const server = createServer((socket) => socket.end());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = connect((server.address() as AddressInfo).port, 'localhost');
  await once(socket, 'connect');
  expect(socket.remotePort).toBe((server.address() as AddressInfo).port);
  socket.destroy();
  server.close();
});

it('connects to an address past loopback', async () => {
  const socket = connect(9, '192.0.2.1');
  const [error] = (await once(socket, 'error')) as [Error];
  // The connection fails at once, as a refused one would: the caller's own handling runs.
  expect(error.message).toContain('192.0.2.1:9');
});

it('fetches from a name past loopback', async () => {
  // fetch wraps the socket's error in its own TypeError.
  await expect(fetch('http://example.invalid/')).rejects.toThrow('fetch failed');
});
