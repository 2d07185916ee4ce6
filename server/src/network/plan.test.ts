import { describe, expect, it } from 'vitest';
import { formatCidr, networkNames, overlaps, parseCidr, planNetwork, routeDestinations, stableMac, tapName } from './plan';
import { leasedAddress, parseLeases } from './leases';

describe('guest network plan', () => {
  it('parses ranges and clears host bits', () => {
    expect(formatCidr(parseCidr('10.2.3.4/16')!)).toBe('10.2.0.0/16');
    expect(parseCidr('10.2.0.0')).toBeNull();
    expect(parseCidr('10.2.0.256/16')).toBeNull();
    expect(parseCidr('10.2.0.0/33')).toBeNull();
  });

  it('plans the gateway, the server end and the leases', () => {
    expect(planNetwork('10.2.0.0/16')).toMatchObject({
      gateway: '10.2.0.1', host: '10.2.0.2', netmask: '255.255.0.0', dhcpFirst: '10.2.0.16', dhcpLast: '10.2.255.254',
    });
    expect(planNetwork('10.9.8.64/28')).toMatchObject({ gateway: '10.9.8.65', host: '10.9.8.66', dhcpFirst: '10.9.8.68', dhcpLast: '10.9.8.78' });
    expect(() => planNetwork('10.0.0.0/30')).toThrow(/28/);
    expect(() => planNetwork('nonsense')).toThrow(/IPv4/);
  });

  it('finds overlaps both ways', () => {
    const a = parseCidr('10.2.0.0/16')!;
    expect(overlaps(a, parseCidr('10.2.5.0/24')!)).toBe(true);
    expect(overlaps(parseCidr('10.0.0.0/8')!, a)).toBe(true);
    expect(overlaps(a, parseCidr('10.3.0.0/16')!)).toBe(false);
  });

  it('reads route destinations, skipping defaults and local entries', () => {
    const text = [
      'default via 192.0.2.1 dev eth0',
      '192.0.2.0/24 dev eth0 proto kernel scope link src 192.0.2.2',
      'local 192.0.2.2 dev eth0 table local proto kernel scope host src 192.0.2.2',
      'broadcast 192.0.2.255 dev eth0 table local',
      'unreachable 10.7.0.0/16',
      '10.9.9.9 via 192.0.2.1 dev eth0',
    ].join('\n');
    expect(routeDestinations(text).map(formatCidr)).toEqual(['192.0.2.0/24', '10.7.0.0/16', '10.9.9.9/32']);
  });

  it('derives names from the data directory, TAPs within 15 characters', () => {
    const a = networkNames('/srv/a');
    const b = networkNames('/srv/b');
    expect(a.namespace).not.toBe(b.namespace);
    expect(a.hostLink).not.toBe(b.hostLink);
    expect(networkNames('/srv/a')).toEqual(a);
    const t = tapName(a, 'some-desktop-id', 0);
    expect(t.length).toBeLessThanOrEqual(15);
    expect(t.startsWith(a.tapPrefix)).toBe(true);
    expect(tapName(a, 'some-desktop-id', 0)).toBe(t);
    expect(tapName(a, 'some-desktop-id', 1)).not.toBe(t);
    expect(networkNames('/x', { namespace: 'guest-net-1', linkPrefix: 'gnet1' })).toEqual({ namespace: 'guest-net-1', hostLink: 'gnet1h', tapPrefix: 'gnet1t', tunnelLink: 'gnet1x' });
    expect(() => networkNames('/x', { linkPrefix: 'much-too-long' })).toThrow();
  });

  it('makes stable MACs in the locally administered range', () => {
    expect(stableMac('d1', 'wireguard')).toMatch(/^52:54:00(:[0-9a-f]{2}){3}$/);
    expect(stableMac('d1', 'wireguard')).toBe(stableMac('d1', 'wireguard'));
    expect(stableMac('d1', 'wireguard')).not.toBe(stableMac('d2', 'wireguard'));
  });
});

describe('dnsmasq leases', () => {
  const text = '1700003600 52:54:00:AA:BB:CC 10.2.0.20 demo-desktop 01:52:54:00:aa:bb:cc\n1700000100 52:54:00:00:00:01 10.2.0.21 * *\ngarbage line\n';
  it('parses the lease file', () => {
    expect(parseLeases(text)).toEqual([
      { expiresAt: 1700003600, mac: '52:54:00:aa:bb:cc', ip: '10.2.0.20', hostname: 'demo-desktop' },
      { expiresAt: 1700000100, mac: '52:54:00:00:00:01', ip: '10.2.0.21', hostname: null },
    ]);
  });
  it('answers only leases granted since the start, and not expired', () => {
    const leases = parseLeases(text);
    const opts = { leaseSeconds: 3600, now: 1700000050 };
    expect(leasedAddress(leases, '52:54:00:aa:bb:cc', { ...opts, since: 1700000000 })).toBe('10.2.0.20');
    expect(leasedAddress(leases, '52:54:00:aa:bb:cc', { ...opts, since: 1700000001 })).toBeNull();
    expect(leasedAddress(leases, '52:54:00:00:00:01', { ...opts, now: 1700000200 })).toBeNull();
    expect(leasedAddress(leases, '52:54:00:ff:ff:ff', opts)).toBeNull();
  });
});
