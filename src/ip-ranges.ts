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
  for (const entry of text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')) {
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

/**
 * Whether `ranges` together hold every address of one family (`0.0.0.0/0`, `::/0`, or parts that
 * add up to them): trusting such a list as proxies trusts every hop. An IPv6 range counts for the
 * IPv4-mapped addresses it holds (`::ffff:0:0/96` holds every IPv4 address).
 */
export function coversEveryAddress(ranges: readonly IpRange[]): boolean {
  const spans: Record<IpRange['family'], [bigint, bigint][]> = { ipv4: [], ipv6: [] };
  const add = (family: IpRange['family'], value: bigint, prefix: number) => {
    const size = 1n << ((family === 'ipv4' ? 32n : 128n) - BigInt(prefix));
    const start = (value / size) * size;
    spans[family].push([start, start + size]);
    return start;
  };
  for (const range of ranges) {
    const start = add(range.family, addressValue(range.address, range.family), range.prefix);
    if (range.family === 'ipv4') continue;
    // proxy-addr matches an IPv4 client against an IPv6 range as its IPv4-mapped address.
    if (range.prefix >= 96 && start >> 32n === 0xffffn) add('ipv4', start & 0xffffffffn, range.prefix - 96);
    else if (range.prefix < 96 && MAPPED_IPV4 >> BigInt(128 - range.prefix) === start >> BigInt(128 - range.prefix)) add('ipv4', 0n, 0);
  }
  return covers(spans.ipv4, 1n << 32n) || covers(spans.ipv6, 1n << 128n);
}

/** `::ffff:0:0`, where the IPv4-mapped IPv6 addresses begin. */
const MAPPED_IPV4 = 0xffffn << 32n;

/** Whether the spans [start, end) together cover [0, end). */
function covers(spans: [bigint, bigint][], end: bigint): boolean {
  let reached = 0n;
  for (const [start, stop] of spans.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    if (start > reached) return false;
    if (stop > reached) reached = stop;
  }
  return reached >= end;
}

function addressValue(address: string, family: IpRange['family']): bigint {
  if (family === 'ipv4') return address.split('.').reduce((value, part) => (value << 8n) + BigInt(part), 0n);
  // Expand `::` and any dotted IPv4 tail into eight groups of 16 bits.
  const [head = '', tail] = address.split('::');
  const groups = (text: string) =>
    text === '' ? [] : text.split(':').flatMap((group) => (group.includes('.') ? dottedGroups(group) : [group]));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return all.reduce((value, group) => (value << 16n) + BigInt(`0x${group}`), 0n);
}

function dottedGroups(dotted: string): string[] {
  const value = addressValue(dotted, 'ipv4');
  return [(value >> 16n).toString(16), (value & 0xffffn).toString(16)];
}
