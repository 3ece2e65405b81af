import { describe, expect, it } from 'vitest';
import { coversEveryAddress, createIpMatcher, parseIpRange, parseIpRanges } from './ip-ranges.ts';

describe('parseIpRanges', () => {
  it('reads addresses and CIDR ranges of both families, ignoring blanks around commas', () => {
    expect(parseIpRanges(' 203.0.113.10, 198.51.100.0/24 ,2001:db8::/32,, ::1 ')).toEqual({
      ranges: [
        { address: '203.0.113.10', prefix: 32, family: 'ipv4' },
        { address: '198.51.100.0', prefix: 24, family: 'ipv4' },
        { address: '2001:db8::', prefix: 32, family: 'ipv6' },
        { address: '::1', prefix: 128, family: 'ipv6' },
      ],
      invalid: [],
    });
  });

  it('names every entry that is neither an address nor a range', () => {
    expect(parseIpRanges('10.0.0.0/33, bank.example.com, 10.0.0.1/8/2, 300.1.1.1, 2001:db8::/129, 10.0.0.0/x').invalid).toEqual([
      '10.0.0.0/33',
      'bank.example.com',
      '10.0.0.1/8/2',
      '300.1.1.1',
      '2001:db8::/129',
      '10.0.0.0/x',
    ]);
    expect(parseIpRange('10.0.0.0/0')).toEqual({ address: '10.0.0.0', prefix: 0, family: 'ipv4' });
  });
});

describe('createIpMatcher', () => {
  const allows = createIpMatcher(parseIpRanges('203.0.113.10, 198.51.100.0/24, 2001:db8::/32').ranges);

  it('matches single addresses and ranges, IPv4 and IPv6', () => {
    expect(allows('203.0.113.10')).toBe(true);
    expect(allows('203.0.113.11')).toBe(false);
    expect(allows('198.51.100.254')).toBe(true);
    expect(allows('198.51.101.1')).toBe(false);
    expect(allows('2001:db8:1::7')).toBe(true);
    expect(allows('2001:db9::7')).toBe(false);
  });

  it('matches an IPv4-mapped IPv6 address (a dual-stack socket) as its IPv4 address', () => {
    expect(allows('::ffff:198.51.100.7')).toBe(true);
    expect(allows('::ffff:192.0.2.7')).toBe(false);
  });

  it('matches nothing that is not an address', () => {
    expect(allows('')).toBe(false);
    expect(allows('unknown')).toBe(false);
  });
});

describe('coversEveryAddress', () => {
  const covers = (text: string) => coversEveryAddress(parseIpRanges(text).ranges);

  it('holds for /0 of either family, parts that add up to it, and every IPv4-mapped address', () => {
    for (const text of [
      '0.0.0.0/0',
      '::/0',
      '0.0.0.0/1, 128.0.0.0/1',
      '128.0.0.0/2, 0.0.0.0/1, 192.0.0.0/2',
      '::ffff:0:0/96',
      '::/64',
      '8000::/1, ::/1',
    ]) {
      expect(covers(text), text).toBe(true);
    }
  });

  it('does not hold for proxies named by address or range, or a gap of one address', () => {
    for (const text of [
      '10.0.0.0/8',
      '10.0.0.0/8, 2001:db8::/32',
      '0.0.0.0/1, 128.0.0.0/2',
      '0.0.0.0/1, 128.0.0.0/2, 192.0.0.0/3, 224.0.0.0/4, 240.0.0.0/5, 248.0.0.0/6, 252.0.0.0/7, 254.0.0.0/8, 255.0.0.0/9, 255.128.0.0/10',
      '::ffff:10.0.0.0/104',
    ]) {
      expect(covers(text), text).toBe(false);
    }
  });
});
