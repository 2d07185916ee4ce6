import { describe, expect, it } from 'vitest';
import { classifyAddress, isPublicAddress, parseV6 } from './address';

describe('media address classifier (server-side request forgery guard)', () => {
  it('classifies IPv4 addresses', () => {
    const cases: [string, string][] = [
      ['8.8.8.8', 'public'],
      ['1.1.1.1', 'public'],
      ['151.101.1.140', 'public'],
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['10.0.0.1', 'private'],
      ['10.255.255.255', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['172.32.0.1', 'public'],
      ['172.15.255.255', 'public'],
      ['192.168.1.10', 'private'],
      ['169.254.169.254', 'link-local'], // cloud metadata
      ['100.64.0.1', 'shared'],
      ['100.127.255.255', 'shared'],
      ['100.128.0.1', 'public'],
      ['100.63.255.255', 'public'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['255.255.255.255', 'reserved'],
      ['240.0.0.1', 'reserved'],
      ['192.0.2.1', 'documentation'],
      ['198.51.100.7', 'documentation'],
      ['203.0.113.9', 'documentation'],
      ['198.18.0.1', 'reserved'],
      ['192.0.0.8', 'reserved'],
    ];
    for (const [a, cls] of cases) expect(classifyAddress(a), a).toBe(cls);
  });

  it('classifies IPv6 addresses, including IPv4 ones carried inside', () => {
    const cases: [string, string][] = [
      ['2606:4700:4700::1111', 'public'],
      ['2a00:1450:4007:80e::200e', 'public'],
      ['::', 'unspecified'],
      ['::1', 'loopback'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
      ['fe80::1', 'link-local'],
      ['fe80::1%eth0', 'link-local'],
      ['febf::1', 'link-local'],
      ['fec0::1', 'private'],
      ['fc00::1', 'private'],
      ['fd12:3456:789a::1', 'private'],
      ['ff02::1', 'multicast'],
      ['ff0e::1', 'multicast'],
      ['2001:db8::1', 'documentation'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::ffff:10.1.2.3', 'private'],
      ['::ffff:169.254.169.254', 'link-local'],
      ['::ffff:8.8.8.8', 'public'],
      ['::127.0.0.1', 'reserved'], // IPv4-compatible (deprecated)
      ['::ffff:0:127.0.0.1', 'reserved'], // IPv4-translated
      ['64:ff9b::10.0.0.1', 'private'],
      ['64:ff9b::8.8.8.8', 'public'],
      ['64:ff9b:1::1', 'private'],
      ['2002:7f00:1::1', 'loopback'], // 6to4 of 127.0.0.1
      ['2002:c0a8:101::1', 'private'], // 6to4 of 192.168.1.1
      ['2002:808:808::1', 'public'],
      ['2001::1', 'reserved'], // Teredo
      ['100::1', 'reserved'],
      ['4000::1', 'reserved'], // outside global unicast
      ['[::1]', 'loopback'],
    ];
    for (const [a, cls] of cases) expect(classifyAddress(a), a).toBe(cls);
  });

  it('refuses what is not an address', () => {
    for (const a of ['', 'localhost', 'example.org', '1.2.3', '256.1.1.1', '1.2.3.4.5', ':::1', '12345::']) {
      expect(classifyAddress(a), a).toBe('invalid');
      expect(isPublicAddress(a)).toBe(false);
    }
  });

  it('expands IPv6 forms', () => {
    expect(parseV6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseV6('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseV6('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseV6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
  });
});
