/**
 * Cheap subscribers for fan-out tests: a bare `ws` socket per subscriber speaking graphql-transport-ws
 * by hand (connection_init, subscribe), recording every message it receives. Hundreds fit where as
 * many graphql-ws clients would be heavy, and the wire is seen exactly as a client sees it.
 */
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { onCleanup } from './cleanup.ts';

/** One message of the protocol as received. */
export interface ProtocolMessage {
  id?: string;
  type: string;
  payload?: any;
}

export interface RawSubscriber {
  socket: WebSocket;
  /** The `id` its subscribe message used. */
  id: string;
  /** Every message after `connection_ack`, in arrival order. */
  messages: ProtocolMessage[];
  /** The payloads of its `next` messages, in order. */
  nexts(): any[];
  /** Resolves with the payloads of its first `count` `next` messages once they have arrived. */
  nexted(count: number): Promise<any[]>;
  /** Resolves with its first message of `type` once it has arrived. */
  arrived(type: string): Promise<ProtocolMessage>;
  /** Resolves with the close code and reason once the socket has closed. */
  closed: Promise<{ code: number; reason: string }>;
  /**
   * Stops reading the connection, as a client that hangs does: the kernel's buffers fill, then the
   * server's writes to it stall. `resume()` reads again (what was sent meanwhile, then any close).
   */
  stall(): void;
  resume(): void;
  /** Drops the connection at once (a TCP reset), as a client that vanishes does. */
  reset(): void;
}

/** The operation a raw subscriber sends; `keep` may shrink what it records of each message (large payloads). */
export interface RawOperation {
  query: string;
  variables?: Record<string, unknown>;
  id?: string;
  keep?: (message: ProtocolMessage) => ProtocolMessage;
}

/**
 * Opens a socket, waits for `connection_ack`, sends one `subscribe`; terminated after the test.
 * With `autoPong: false` it never answers the server's pings (a client whose peer is gone, as the
 * server's keep-alive sees it).
 */
export async function openRawSubscriber(
  graphqlUrl: string,
  operation: RawOperation,
  options: { autoPong?: boolean } = {},
): Promise<RawSubscriber> {
  const socket = new WebSocket(graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws', { autoPong: options.autoPong ?? true });
  onCleanup(() => socket.terminate());
  const id = operation.id ?? '1';
  const messages: ProtocolMessage[] = [];
  const payloads: any[] = [];
  // Each waiter says whether it is done (and then has resolved its promise).
  let waiters: (() => boolean)[] = [];
  const until = <T>(found: () => T | undefined) =>
    new Promise<T>((resolve) => {
      const waiter = () => {
        const value = found();
        if (value !== undefined) resolve(value);
        return value !== undefined;
      };
      if (!waiter()) waiters.push(waiter);
    });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
  });
  const acknowledged = Promise.withResolvers<void>();
  // A listener for good: an 'error' with none would throw. Errors before the ack fail the open.
  socket.on('error', acknowledged.reject);
  void closed.then(({ code }) => acknowledged.reject(new Error(`closed with ${code} before connection_ack`)));
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as ProtocolMessage;
    if (message.type === 'connection_ack') acknowledged.resolve();
    else if (message.type === 'ping') socket.send(JSON.stringify({ type: 'pong' }));
    else {
      const kept = operation.keep ? operation.keep(message) : message;
      messages.push(kept);
      if (kept.type === 'next') payloads.push(kept.payload);
      if (waiters.length > 0) waiters = waiters.filter((waiter) => !waiter());
    }
  });
  socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init' })));
  await acknowledged.promise;
  socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query: operation.query, variables: operation.variables ?? {} } }));
  // ws reads from the TCP socket underneath; pausing that stops every read, as a hung client would.
  const tcp = () => (socket as unknown as { _socket: Socket })._socket;
  return {
    socket,
    id,
    messages,
    nexts: () => [...payloads],
    nexted: (count) => until(() => (payloads.length >= count ? payloads.slice(0, count) : undefined)),
    arrived: (type) => until(() => messages.find((m) => m.type === type)),
    closed,
    stall: () => void tcp().pause(),
    resume: () => void tcp().resume(),
    reset: () => void tcp().resetAndDestroy(),
  };
}

/** Opens `count` subscribers, `batch` at a time so the listen backlog never overflows. */
export async function openRawSubscribers(
  graphqlUrl: string,
  count: number,
  operationFor: (index: number) => RawOperation,
  batch = 100,
): Promise<RawSubscriber[]> {
  const subscribers: RawSubscriber[] = [];
  for (let start = 0; start < count; start += batch) {
    const indexes = Array.from({ length: Math.min(batch, count - start) }, (_, i) => start + i);
    subscribers.push(...(await Promise.all(indexes.map((index) => openRawSubscriber(graphqlUrl, operationFor(index))))));
  }
  return subscribers;
}
