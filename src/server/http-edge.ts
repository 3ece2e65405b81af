// The one HTTP edge: the node:http server that every route is served on, whoever answers it (Fastify,
// or the webhook's own route ahead of it). Its timeouts, the drain, the client address and request
// timing live here once, so no route can miss one: Fastify applies its keep-alive default only to a
// server it makes itself, and a server made anywhere else would quietly go without it.
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import { withinDeadline } from '../async/deadline.ts';
import type { TrustProxy } from '../config/network.ts';
import type { Metrics } from '../metrics.ts';
import { SHUTDOWN_DEADLINES } from '../shutdown.ts';

/**
 * Every connection's timeouts. Fastify's defaults, carried over on purpose since it leaves a server
 * it is given (`serverFactory`) as Node made it, and Node closes idle connections after 5 s.
 */
export const SERVER_TIMEOUTS = {
  /** Idle keep-alive connections outlive a load balancer's usual 60 s idle time, so it never reuses one we closed. */
  keepAliveTimeout: 72_000,
  /** A request's headers must all arrive within this from its first byte (an idle connection is not timed by it). */
  headersTimeout: 60_000,
  /** A whole request (at most 1 MiB) must arrive within this; the response may take as long as the bank does. */
  requestTimeout: 120_000,
} as const;

/** What a request that arrives while the server drains is told (Fastify's own 503 body). */
const DRAINING_BODY = '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}';
/** The route label of requests refused for the drain, before any router saw them. */
const DRAINING_ROUTE = 'draining';

type TrustFunction = (address: string, hop: number) => boolean;

export interface HttpEdge {
  readonly server: Server;
  /** `TRUST_PROXY` as proxy-addr's trust function (`false`: no proxy), for Fastify's `trustProxy`. */
  readonly trustProxy: TrustFunction | false;
  /** The client's address, as Fastify's `request.ip` gives it for the same `TRUST_PROXY`. */
  clientAddress(request: IncomingMessage): string;
  /** Whether the drain has begun; readiness answers 503 from that moment. */
  isDraining(): boolean;
  /** Serves every request with `listener`, except while draining (503, connection closed). Returns the server. */
  serve(listener: RequestListener): Server;
  /**
   * Another server with the same settings, drained with the first, for routes on a port of their
   * own (`WEBHOOK_PORT`); serves `listener` as `serve` does.
   */
  serveOnOwnPort(listener: RequestListener): Server;
  /** Told by whichever router answered, once a response is written: timing, and the drain's idle close. */
  responded(request: { method: string; route: string; statusCode: number }, seconds: number): void;
  /**
   * Drains: new requests get 503, idle connections close as their last response ends, and whatever
   * is still open at the shutdown's connection deadline is cut. Settles once `closeRoutes` (which
   * stops the server) has: rejected when it had to cut, since requests in flight then never finished.
   */
  drain(closeRoutes: () => Promise<void>): Promise<void>;
}

/** Creates the server with the shared timeouts; nothing listens until Fastify's `listen`. */
export function createHttpEdge({
  metrics,
  trustProxy,
}: {
  metrics: Pick<Metrics, 'httpRequestDuration'>;
  trustProxy: TrustProxy;
}): HttpEdge {
  const servers: Server[] = [];
  // Every open socket of every server, WebSockets included: Node's closeAllConnections knows only HTTP
  // ones, and a WebSocket client that never answers its close would otherwise hold the drain past its deadline.
  const sockets = new Set<Socket>();
  const newServer = () => {
    const created = createServer({ ...SERVER_TIMEOUTS });
    created.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    servers.push(created);
    return created;
  };
  const server = newServer();
  const trust = trustFunction(trustProxy);
  let draining = false;

  const responded: HttpEdge['responded'] = ({ method, route, statusCode }, seconds) => {
    // The route pattern, never the raw URL: query strings may carry account numbers.
    metrics.httpRequestDuration.observe({ method, route, status_code: String(statusCode) }, seconds);
    // A keep-alive connection busy when the drain began would otherwise stay open after its last
    // response until the client drops it or the deadline cuts it.
    if (draining) setImmediate(() => servers.forEach((each) => each.closeIdleConnections()));
  };
  const serveOn = (target: Server, listener: RequestListener) => {
    target.on('request', (request: IncomingMessage, response: ServerResponse) => {
      if (!draining) return listener(request, response);
      const started = performance.now();
      response.writeHead(503, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': DRAINING_BODY.length,
        connection: 'close',
      });
      response.end(DRAINING_BODY);
      responded({ method: request.method ?? 'GET', route: DRAINING_ROUTE, statusCode: 503 }, (performance.now() - started) / 1000);
    });
    return target;
  };

  return {
    server,
    trustProxy: trust,
    clientAddress: trust === false ? (request) => request.socket.remoteAddress ?? '' : (request) => proxyAddr(request, trust),
    isDraining: () => draining,
    serve: (listener) => serveOn(server, listener),
    serveOnOwnPort: (listener) => serveOn(newServer(), listener),
    responded,
    async drain(closeRoutes) {
      draining = true;
      for (const each of servers) each.closeIdleConnections();
      const closed = closeRoutes();
      if (
        await withinDeadline(
          closed.then(() => true),
          SHUTDOWN_DEADLINES.connectionsMs,
          false,
        )
      )
        return;
      for (const each of servers) each.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      // The routes finish once their connections are gone; a failure of theirs still comes first.
      await closed;
      throw new Error('the drain ran out of time: connections still open at its deadline were cut');
    },
  };
}

/**
 * `TRUST_PROXY` as proxy-addr's trust function. proxy-addr walks X-Forwarded-For from the nearest
 * hop and stops at the first it does not trust, so the address is never one a client made up,
 * unless it reached us through a trusted hop.
 */
function trustFunction(trust: TrustProxy): TrustFunction | false {
  if (trust === false) return false;
  if (trust === true) return () => true;
  // A hop count means what it means to proxy-addr and Express, the `trust` hops nearest to us are
  // proxies, not what Fastify makes of a bare number (no hop trusted: it cannot vouch for the nearest).
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return proxyAddr.compile([...trust]);
}
