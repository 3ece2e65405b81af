/**
 * Lists of IP addresses and CIDR ranges, IPv4 and IPv6, as operators write them in one variable
 * (`203.0.113.10, 198.51.100.0/24, 2001:db8::/32`): read and checked once, matched with node:net's
 * BlockList, which also matches an IPv4-mapped IPv6 address (`::ffff:203.0.113.10`) as IPv4.
 */
import { BlockList, isIP } from 'node:net';

/** One address (`prefix` the full length) or range. */
export interface IpRange {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** A comma-separated list read into ranges; `invalid` holds the entries that are neither. */
export function parseIpRanges(text: string): { ranges: IpRange[]; invalid: string[] } {
  const ranges: IpRange[] = [];
  const invalid: string[] = [];
  for (const entry of text.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const range = parseIpRange(entry);
    if (range === undefined) invalid.push(entry);
    else ranges.push(range);
  }
  return { ranges, invalid };
}

/** `203.0.113.10`, `198.51.100.0/24`, `2001:db8::1` or `2001:db8::/32`; `undefined` for anything else. */
export function parseIpRange(entry: string): IpRange | undefined {
  const [address = '', prefixText, extra] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return undefined;
  const bits = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Whether an address (as Node gives it: a socket's `remoteAddress`, Fastify's `request.ip`) is in the ranges. */
export type IpMatcher = (address: string) => boolean;

/** A matcher over `ranges`; an address that is not an IP address at all matches nothing. */
export function createIpMatcher(ranges: readonly IpRange[]): IpMatcher {
  const list = new BlockList();
  for (const { address, prefix, family } of ranges) list.addSubnet(address, prefix, family);
  return (address) => {
    const version = isIP(address);
    return version !== 0 && list.check(address, version === 4 ? 'ipv4' : 'ipv6');
  };
}
