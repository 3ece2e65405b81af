// Where webhook deliveries may come from, which proxies tell us the client's address, and CORS.
import proxyAddr from '@fastify/proxy-addr';
import { coversEveryAddress, parseIpRange, parseIpRanges, type IpRange } from '../ip-ranges.ts';
import { sandboxRules, type Source } from './source.ts';

/** Browser origins allowed to call `/graphql` cross-origin: every one, or exactly these (none when empty). */
export type CorsOrigins = 'any' | readonly string[];

/**
 * `false`: the socket's address is the client's. `true`: every hop is trusted. A number: that many
 * hops nearest to us are. A list: hops whose address is in it (addresses, CIDR ranges, or
 * proxy-addr's `loopback`, `linklocal`, `uniquelocal`) are.
 */
export type TrustProxy = boolean | number | readonly string[];

/** What the network settings come to. */
export interface NetworkConfig {
  /**
   * `WEBHOOK_ALLOWED_IPS`: where collection notifications may come from; `undefined` is anywhere
   * (unset under the sandbox rules, or `any` given on purpose).
   */
  webhookAllowedSources: readonly IpRange[] | undefined;
  /** `TRUST_PROXY`: whose `X-Forwarded-For` gives the client address (Fastify's `trustProxy`). */
  trustProxy: TrustProxy;
  /** `CORS_ORIGINS`: the origins `/graphql` answers cross-origin; `'any'` under the sandbox rules when unset. */
  corsOrigins: CorsOrigins;
}

/** Where webhook deliveries may come from, which proxies tell us the client's address, and CORS. */
export function readNetwork(source: Source): NetworkConfig {
  const webhookAllowedSources = readWebhookAllowedSources(source);
  const trustProxy = readTrustProxy(source.read('TRUST_PROXY'), source);
  // Trusting every hop lets the sender write the address that is seen: the left-most
  // X-Forwarded-For entry is the client's own claim. An allow-list, or production, needs the proxies named.
  const why = webhookAllowedSources !== undefined ? 'with WEBHOOK_ALLOWED_IPS' : source.closedBy === undefined ? undefined : `when ${source.closedBy}`;
  if (why !== undefined && trustsEveryHop(trustProxy)) {
    source.problems.push(
      `TRUST_PROXY=${source.read('TRUST_PROXY')} trusts every hop, refused ${why}: every sender could pick its own address. Give the number of proxies in front (TRUST_PROXY=1) or their addresses (TRUST_PROXY=10.0.0.0/8)`,
    );
  }
  return { webhookAllowedSources, trustProxy, corsOrigins: readCorsOrigins(source) };
}

/**
 * `WEBHOOK_ALLOWED_IPS`: addresses and ranges. The bank's signature is the same on every delivery,
 * so whoever has seen one can sign their own: outside the sandbox rules the source must be named, or
 * every source accepted on purpose with `any` (warned of at start).
 */
function readWebhookAllowedSources(source: Source): IpRange[] | undefined {
  const value = source.read('WEBHOOK_ALLOWED_IPS');
  if (value === undefined) {
    if (source.closedBy !== undefined) {
      source.problems.push(
        `WEBHOOK_ALLOWED_IPS is required when ${source.closedBy}: the bank's addresses or ranges (its signature is the same on every delivery, so whoever has seen one could sign their own), or "any" to accept every source on purpose`,
      );
    }
    return undefined;
  }
  if (value.toLowerCase() === 'any') {
    source.warnings.push(
      "WEBHOOK_ALLOWED_IPS=any: the collection webhook accepts deliveries from every address. The bank signs every delivery with the same signature, so anyone who has seen one can sign a forged transfer and be answered 00: set the bank's addresses instead",
    );
    return undefined;
  }
  const { ranges, invalid } = parseIpRanges(value);
  for (const entry of invalid) {
    source.problems.push(
      entry.toLowerCase() === 'any'
        ? 'WEBHOOK_ALLOWED_IPS: "any" accepts every source and stands alone, not beside addresses'
        : `WEBHOOK_ALLOWED_IPS: "${entry}" is not an IP address or CIDR range`,
    );
  }
  if (ranges.length === 0 && invalid.length === 0) source.problems.push('WEBHOOK_ALLOWED_IPS lists no address');
  return ranges;
}

/**
 * `CORS_ORIGINS`: `*` or comma-separated origins. Unset, any origin under the sandbox rules (Apollo
 * Sandbox and local apps), none elsewhere: behind the router, a page an employee opens must not
 * read name enquiries through their browser.
 */
function readCorsOrigins(source: Source): CorsOrigins {
  const value = source.read('CORS_ORIGINS');
  if (value === undefined) return sandboxRules(source) ? 'any' : [];
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
  const invalid = entries.filter((entry) => !PROXY_NAMES.has(entry) && parseIpRange(entry) === undefined);
  for (const entry of invalid) {
    source.problems.push(`TRUST_PROXY: "${entry}" is not true, a hop count, an IP address, a CIDR range, loopback, linklocal or uniquelocal`);
  }
  if (invalid.length > 0) return entries;
  // Ranges that hold every address trust every hop, which proxy-addr would refuse to compile (`/0`).
  if (trustsEveryHop(entries)) return true;
  try {
    // What Fastify will compile at start: anything it refuses is reported here, by name, not as a crash.
    proxyAddr.compile(entries);
  } catch (error) {
    source.problems.push(`TRUST_PROXY: ${(error as Error).message}`);
  }
  return entries;
}

/** Whether `trust` lets any hop vouch for the client's address. */
function trustsEveryHop(trust: TrustProxy): boolean {
  if (typeof trust === 'boolean') return trust;
  if (typeof trust === 'number') return false;
  const ranges = trust.map((entry) => parseIpRange(entry)).filter((range) => range !== undefined);
  return coversEveryAddress(ranges);
}
