/**
 * A stand-in bank whose every answer the test writes: a 500, a hang past the time-out, a socket
 * destroyed mid-request, malformed JSON, an HTML page, a 401, a 302. For fault tests of the upstream
 * clients and of the GraphQL layer above them; the real wire format is the sandbox's job.
 *
 *   const bank = await startFakeBank((request, reply) => reply.status(500).json({ responseCode: '96' }));
 *   // point a client at bank.url; bank.received lists what reached it
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onCleanup } from './cleanup.ts';
import { Inbox } from './wait.ts';

/** A request as the fake bank received it, body read whole. */
export interface FakeBankRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What a handler answers with; `raw` is the node response, for anything else (hanging: do nothing). */
export interface FakeBankReply {
  status(code: number): FakeBankReply;
  header(name: string, value: string): FakeBankReply;
  /** Ends the answer with `value` as JSON. */
  json(value: unknown): void;
  /** Ends the answer with `text` verbatim (malformed JSON, an HTML page), as `contentType`. */
  text(text: string, contentType?: string): void;
  /** Destroys the connection without an answer (a reset). */
  destroy(): void;
  raw: ServerResponse;
}

export type FakeBankHandler = (request: FakeBankRequest, reply: FakeBankReply) => void | Promise<void>;

export interface FakeBank {
  /** `http://127.0.0.1:<port>`, no trailing slash; usable as any area's base URL. */
  url: string;
  /** Every request that reached the bank, in order; `received.until(…)` waits for more. */
  received: Inbox<FakeBankRequest>;
  close(): Promise<void>;
}

/**
 * Starts a fake bank on 127.0.0.1 and a free port. It closes itself (hanging connections too) when
 * the test that started it finishes.
 */
export async function startFakeBank(handler: FakeBankHandler): Promise<FakeBank> {
  const received = new Inbox<FakeBankRequest>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      Promise.resolve()
        .then(() => handler(request, createReply(res)))
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  let closed: Promise<void> | undefined;
  const bank: FakeBank = {
    url: `http://127.0.0.1:${port}`,
    received,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
  onCleanup(() => bank.close());
  return bank;
}

/** A base URL where nothing listens (a port just released), for "connection refused". */
export async function unusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

function createReply(res: ServerResponse): FakeBankReply {
  const reply: FakeBankReply = {
    raw: res,
    status(code) {
      res.statusCode = code;
      return reply;
    },
    header(name, value) {
      res.setHeader(name, value);
      return reply;
    },
    json(value) {
      reply.text(JSON.stringify(value), 'application/json');
    },
    text(text, contentType = 'text/plain; charset=utf-8') {
      if (!res.hasHeader('content-type')) res.setHeader('content-type', contentType);
      res.end(text);
    },
    destroy() {
      res.socket?.destroy();
    },
  };
  return reply;
}
