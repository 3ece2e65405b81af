// Where webhook deliveries may come from, which proxies tell us the client's address, and CORS.
import { parseIpRange, parseIpRanges, type IpRange } from '../ip-ranges.ts';
import type { CorsOrigins } from '../server/graphql.ts';
import type { TrustProxy } from '../server/http-edge.ts';
import type { Source } from './source.ts';

/** What the network settings come to. */
export interface NetworkConfig {
  /** `WEBHOOK_ALLOWED_IPS`: where collection notifications may come from; `undefined` is anywhere. */
  webhookAllowedSources: readonly IpRange[] | undefined;
  /** `TRUST_PROXY`: whose `X-Forwarded-For` gives the client address (Fastify's `trustProxy`). */
  trustProxy: TrustProxy;
  /** `CORS_ORIGINS`: the origins `/graphql` answers cross-origin; `'any'` outside production when unset. */
  corsOrigins: CorsOrigins;
}

/** Where webhook deliveries may come from, which proxies tell us the client's address, and CORS. */
export function readNetwork(source: Source): NetworkConfig {
  const allowed = source.read('WEBHOOK_ALLOWED_IPS');
  let webhookAllowedSources: IpRange[] | undefined;
  if (allowed !== undefined) {
    const { ranges, invalid } = parseIpRanges(allowed);
    for (const entry of invalid) source.problems.push(`WEBHOOK_ALLOWED_IPS: "${entry}" is not an IP address or CIDR range`);
    if (ranges.length === 0 && invalid.length === 0) source.problems.push('WEBHOOK_ALLOWED_IPS lists no address');
    webhookAllowedSources = ranges;
  }
  const trustProxy = readTrustProxy(source.read('TRUST_PROXY'), source);
  // Trusting every hop lets the sender write the address that is checked: the left-most
  // X-Forwarded-For entry is the client's own claim. An allow-list needs the proxies named.
  if (trustProxy === true && webhookAllowedSources !== undefined) {
    source.problems.push(
      'TRUST_PROXY=true cannot be used with WEBHOOK_ALLOWED_IPS: every sender could pick its own address. Give the number of proxies in front (TRUST_PROXY=1) or their addresses (TRUST_PROXY=10.0.0.0/8)',
    );
  }
  return { webhookAllowedSources, trustProxy, corsOrigins: readCorsOrigins(source) };
}

/**
 * `CORS_ORIGINS`: `*` or comma-separated origins. Unset, any origin outside production (Apollo
 * Sandbox and local apps), none in production: behind the router, a page an employee opens must
 * not read name enquiries through their browser.
 */
function readCorsOrigins(source: Source): CorsOrigins {
  const value = source.read('CORS_ORIGINS');
  if (value === undefined) return source.production ? [] : 'any';
  if (value === '*') return 'any';
  const origins = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const origin of origins) {
    if (!isOrigin(origin)) source.problems.push(`CORS_ORIGINS: "${origin}" is not an origin such as https://app.example.com (scheme, host and port only)`);
  }
  if (origins.length === 0) source.problems.push('CORS_ORIGINS lists no origin');
  return origins;
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function readTrustProxy(value: string | undefined, source: Source): TrustProxy {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of entries) {
    if (!PROXY_NAMES.has(entry) && parseIpRange(entry) === undefined) {
      source.problems.push(`TRUST_PROXY: "${entry}" is not true, a hop count, an IP address, a CIDR range, loopback, linklocal or uniquelocal`);
    }
  }
  return entries;
}

