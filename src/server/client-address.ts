/**
 * Which address a request comes from: the socket's, unless `TRUST_PROXY` names the proxies whose
 * `X-Forwarded-For` we believe. Fastify (through proxy-addr) walks the header from the nearest hop
 * and stops at the first it does not trust, so `request.ip` is never a value a client made up,
 * unless it reached us through a trusted hop.
 */
import type { FastifyServerOptions } from 'fastify';
import type { TrustProxy } from '../config.ts';

/** `TRUST_PROXY` as Fastify's `trustProxy` option. */
export function fastifyTrustProxy(trust: TrustProxy): FastifyServerOptions['trustProxy'] {
  if (typeof trust === 'boolean') return trust;
  // Fastify now trusts nothing for a bare number (it cannot vouch for the nearest hop); a hop count
  // here means what it means to proxy-addr and Express: the `trust` hops nearest to us are proxies.
  if (typeof trust === 'number') return (_address: string, hop: number) => hop < trust;
  return [...trust];
}
