// Where webhook deliveries may come from, which proxies tell us the client's address, and CORS.
import proxyAddr from '@fastify/proxy-addr';
import type { z } from 'zod';
import { coversEveryAddress, parseIpRange, type IpRange } from '../ip-ranges.ts';
import { entries, quotable, text } from './fields.ts';

/** Browser origins allowed to call `/graphql` cross-origin: every one, or exactly these (none when empty). */
export type CorsOrigins = 'any' | readonly string[];

/**
 * `false`: the socket's address is the client's. `true`: every hop is trusted. A number: that many
 * hops nearest to us are. A list: hops whose address is in it (addresses, CIDR ranges, or
 * proxy-addr's `loopback`, `linklocal`, `uniquelocal`) are.
 */
export type TrustProxy = boolean | number | readonly string[];

/** Logged at start beside `WEBHOOK_ALLOWED_IPS=any`, which is accepted on purpose. */
export const ANY_SOURCE_WARNING =
  "WEBHOOK_ALLOWED_IPS=any: the collection webhook accepts deliveries from every address. The bank signs every delivery with the same signature, so anyone who has seen one can sign a forged transfer and be answered 00: set the bank's addresses instead";

/** `WEBHOOK_ALLOWED_IPS`: `any` (every source, on purpose, whatever the case), or addresses and CIDR ranges. */
export const allowedSources = text.transform((value, ctx): 'any' | IpRange[] => {
  if (value.toLowerCase() === 'any') return 'any';
  const refused = (entry: string) =>
    entry.toLowerCase() === 'any'
      ? ': "any" accepts every source and stands alone, not beside addresses'
      : `: "${entry}" is not an IP address or CIDR range`;
  return entries(value, ctx, parseIpRange, refused, 'lists no address');
});

/** `CORS_ORIGINS`: `*` (any origin) or comma-separated origins. */
export const corsOrigins = text.transform((value, ctx): CorsOrigins => {
  if (value === '*') return 'any';
  const refused = (entry: string) => `: "${quotable(entry)}" is not an origin such as https://app.example.com (scheme, host and port only)`;
  return entries(value, ctx, (entry) => (isOrigin(entry) ? entry : undefined), refused, 'lists no origin');
});

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY` as Fastify reads it. Trusting every hop lets the sender write the address that is
 * seen (the left-most X-Forwarded-For entry is its own claim): refused when `refusedWhy` says why.
 */
export function trustProxy(refusedWhy: string | undefined) {
  return text.transform((value, ctx): TrustProxy => {
    const trust = readTrustProxy(value, ctx);
    if (refusedWhy !== undefined && trustsEveryHop(trust)) {
      ctx.addIssue(
        `=${value} trusts every hop, refused ${refusedWhy}: every sender could pick its own address. Give the number of proxies in front (TRUST_PROXY=1) or their addresses (TRUST_PROXY=10.0.0.0/8)`,
      );
    }
    return trust;
  });
}

function readTrustProxy(value: string, ctx: z.RefinementCtx): TrustProxy {
  if (value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const list = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const invalid = list.filter((entry) => !PROXY_NAMES.has(entry) && parseIpRange(entry) === undefined);
  for (const entry of invalid)
    ctx.addIssue(`: "${entry}" is not true, a hop count, an IP address, a CIDR range, loopback, linklocal or uniquelocal`);
  if (invalid.length > 0) return list;
  // Ranges that hold every address trust every hop, which proxy-addr would refuse to compile (`/0`).
  if (trustsEveryHop(list)) return true;
  try {
    // What Fastify will compile at start: anything it refuses is reported here, by name, not as a crash.
    proxyAddr.compile(list);
  } catch (error) {
    ctx.addIssue(`: ${(error as Error).message}`);
  }
  return list;
}

/** Whether `trust` lets any hop vouch for the client's address. */
function trustsEveryHop(trust: TrustProxy): boolean {
  if (typeof trust === 'boolean') return trust;
  if (typeof trust === 'number') return false;
  return coversEveryAddress(trust.map((entry) => parseIpRange(entry)).filter((range) => range !== undefined));
}
