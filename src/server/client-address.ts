/**
 * Which address a request comes from: the socket's, unless `TRUST_PROXY` names the proxies whose
 * `X-Forwarded-For` we believe. Fastify (through proxy-addr) walks the header from the nearest hop
 * and stops at the first it does not trust, so `request.ip` is never a value a client made up,
 * unless it reached us through a trusted hop.
 */
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyServerOptions } from 'fastify';
import type { TrustProxy } from '../config.ts';

type TrustFunction = (address: string, hop: number) => boolean;

/** `TRUST_PROXY` as proxy-addr's trust function; `false` trusts no proxy. One for Fastify and the webhook. */
function trustFunction(trust: TrustProxy): TrustFunction | false {
  if (trust === false) return false;
  if (trust === true) return () => true;
  // Fastify now trusts nothing for a bare number (it cannot vouch for the nearest hop); a hop count
  // here means what it means to proxy-addr and Express: the `trust` hops nearest to us are proxies.
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return proxyAddr.compile([...trust]);
}

/** `TRUST_PROXY` as Fastify's `trustProxy` option. */
export function fastifyTrustProxy(trust: TrustProxy): FastifyServerOptions['trustProxy'] {
  return trustFunction(trust);
}

/**
 * The client address of a request outside Fastify (the webhook's own route), exactly as Fastify's
 * `request.ip` gives it for the same `TRUST_PROXY`: the same proxy-addr walk over the same trust.
 */
export function clientAddressResolver(trust: TrustProxy): (request: IncomingMessage) => string {
  const trusted = trustFunction(trust);
  if (trusted === false) return (request) => request.socket.remoteAddress ?? '';
  return (request) => proxyAddr(request, trusted);
}
