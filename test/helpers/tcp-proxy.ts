import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { onCleanup } from './cleanup.ts';

const DEFAULT_PORTS: Record<string, number> = { 'redis:': 6379, 'rediss:': 6379, 'postgres:': 5432, 'postgresql:': 5432 };

/** A TCP proxy in front of a service, whose link a test can cut and restore. */
export interface TcpProxy {
  /** `target` with its host and port replaced by the proxy's (credentials, path and query kept). */
  url: string;
  /** Drops every connection through the proxy and refuses new ones until `restore()`. */
  cut(): void;
  /**
   * Stops carrying bytes, either way, on every connection, open now or opened later, without closing
   * any: a network that stops answering, until `restore()`.
   */
  stall(): void;
  restore(): void;
}

/**
 * Starts a proxy on a free loopback port to the host and port of `target` (a `redis://…` URL, say),
 * to play a network outage between one client and a service without touching the service. Closed
 * after the test. Cutting keeps the port: a refused connection is accepted and dropped at once.
 */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const upstream = new URL(target);
  const port = Number(upstream.port || DEFAULT_PORTS[upstream.protocol]);
  const sockets = new Set<Socket>();
  let cut = false;
  let stalled = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    if (cut) return void client.destroy();
    const service = connect(port, upstream.hostname.replace(/^\[|\]$/g, ''));
    for (const socket of [client, service]) {
      track(socket);
      // Either side failing ends both, as a broken link would.
      socket.on('error', () => {
        client.destroy();
        service.destroy();
      });
      socket.on('close', () => (socket === client ? service : client).destroy());
    }
    // Not pipe(): a stalled link holds what arrives, and passes it on once restored (as TCP would).
    const held: [Socket, Buffer][] = [];
    for (const [from, to] of [
      [client, service],
      [service, client],
    ] as const) {
      from.on('data', (chunk: Buffer) => (stalled ? held.push([to, chunk]) : to.write(chunk)));
      from.on('end', () => to.end());
    }
    const flush = () => {
      for (const [to, chunk] of held.splice(0)) if (!to.destroyed) to.write(chunk);
    };
    flushes.add(flush);
    client.on('close', () => flushes.delete(flush));
  });
  const flushes = new Set<() => void>();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  onCleanup(async () => {
    dropAll();
    server.close();
    await once(server, 'close');
  });

  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    cut() {
      cut = true;
      dropAll();
    },
    stall() {
      stalled = true;
    },
    restore() {
      cut = false;
      stalled = false;
      for (const flush of flushes) flush();
    },
  };
}
