import { describe, expect, it } from 'vitest';
import { clientKey, createRateLimiter } from './rate-limit';

describe('bounded rate limiter', () => {
  it('allows the limit in a window, then says when to retry, and starts over after the window', () => {
    const limiter = createRateLimiter({ limit: 3, windowMs: 60_000, maxKeys: 10 });
    expect([0, 1, 2].map((i) => limiter.hit('a', 1000 + i))).toEqual([null, null, null]);
    expect(limiter.hit('a', 1003)).toEqual(new Date(61_000));
    expect(limiter.hit('b', 1004)).toBeNull();
    expect(limiter.hit('a', 61_000)).toBeNull();
  });

  it('never holds more than maxKeys, however many keys ask', () => {
    const limiter = createRateLimiter({ limit: 30, windowMs: 60_000, maxKeys: 100 });
    for (let i = 0; i < 100_000; i++) {
      limiter.hit(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 1000 + i / 1000);
      if (limiter.size > 100) throw new Error(`grew to ${limiter.size}`);
    }
    expect(limiter.size).toBe(100);
  });

  it('sweeps keys whose window has passed', () => {
    const limiter = createRateLimiter({ limit: 30, windowMs: 60_000, maxKeys: 1000 });
    for (let i = 0; i < 500; i++) limiter.hit(`k${i}`, 0);
    expect(limiter.size).toBe(500);
    limiter.hit('late', 60_000);
    expect(limiter.size).toBe(1);
  });

  it('a busy key is kept while a flood of new keys passes, until it is the oldest', () => {
    const limiter = createRateLimiter({ limit: 2, windowMs: 60_000, maxKeys: 3 });
    limiter.hit('x', 0);
    limiter.hit('x', 1);
    expect(limiter.hit('x', 2)).not.toBeNull();
    limiter.hit('y', 3);
    limiter.hit('z', 4);
    expect(limiter.size).toBe(3);
    expect(limiter.hit('x', 5)).not.toBeNull();
  });
});

describe('client key', () => {
  it('is the IPv4 address, also when mapped, and the /64 of an IPv6 one', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });
});
