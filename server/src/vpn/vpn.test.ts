import { firstMissing, itIf, missingPrograms, missingRoot } from '../../test/helpers/can-run';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { freeAddress, rangesOverlap, usersRange } from './addresses';
import { wgEndpoint, wgServerConfig, wgUserConfig } from './config-file';
import { vpnRuleset } from './firewall';
import { generateWgKeyPair, isWgKey, wgPublicKeyOf } from './keys';

// wg and nft: installed by npm test (VPN_PACKAGES).

describe('WireGuard keys', () => {
  it('are 32-byte x25519 keys in base64, the public one derived from the private one', () => {
    const a = generateWgKeyPair();
    const b = generateWgKeyPair();
    expect(isWgKey(a.privateKey) && isWgKey(a.publicKey)).toBe(true);
    expect(Buffer.from(a.privateKey, 'base64')).toHaveLength(32);
    expect(a.privateKey).not.toBe(b.privateKey);
    expect(wgPublicKeyOf(a.privateKey)).toBe(a.publicKey);
    expect(() => wgPublicKeyOf('short')).toThrow();
  });

  itIf(missingPrograms('wg'))('agree with `wg pubkey`', () => {
    const a = generateWgKeyPair();
    expect(execFileSync('wg', ['pubkey'], { input: a.privateKey }).toString().trim()).toBe(a.publicKey);
  });
});

describe('the users range', () => {
  it('gives .1 to the endpoint and users the lowest free address from .2', () => {
    const r = usersRange('10.0.0.0/16');
    expect(r.endpoint).toBe('10.0.0.1');
    expect(freeAddress(r, [])).toBe('10.0.0.2');
    expect(freeAddress(r, ['10.0.0.2', '10.0.0.4'])).toBe('10.0.0.3');
    const small = usersRange('10.9.9.0/30');
    expect(freeAddress(small, [])).toBe('10.9.9.2');
    expect(freeAddress(small, ['10.9.9.2'])).toBeNull(); // .3 is the broadcast
  });

  it('knows when it overlaps the guests range', () => {
    expect(rangesOverlap('10.0.0.0/16', '10.2.0.0/16')).toBe(false);
    expect(rangesOverlap('10.0.0.0/8', '10.2.0.0/16')).toBe(true);
  });
});

describe('the files', () => {
  it('the user file limits AllowedIPs to the guests and has no PostUp', () => {
    const text = wgUserConfig({ address: '10.0.0.2', privateKey: 'K', serverPublicKey: 'S', endpoint: wgEndpoint('vdi.example.org', 443), allowedIps: '10.2.0.0/16' });
    expect(text).toContain('Address = 10.0.0.2\n');
    expect(text).toContain('Endpoint = vdi.example.org:443\n');
    expect(text).toContain('AllowedIPs = 10.2.0.0/16\n');
    expect(text).not.toMatch(/PostUp|DNS/);
    expect(wgEndpoint('::1', 51820)).toBe('[::1]:51820');
  });

  it('the endpoint file lists each user as a /32 peer', () => {
    const text = wgServerConfig({ privateKey: 'P', listenPort: 443, peers: [{ publicKey: 'U1', address: '10.0.0.2' }] });
    expect(text).toMatch(/\[Peer\]\nPublicKey = U1\nAllowedIPs = 10\.0\.0\.2\/32/);
  });
});

describe('the firewall', () => {
  it('lets each user reach only the listed guests, drops the rest and anything to the namespace', () => {
    const rules = vpnRuleset('vabcdwg', [
      { user: '10.0.0.2', guest: '10.2.0.20' },
      { user: '10.0.0.2', guest: '10.2.0.20' },
      { user: '10.0.0.3', guest: 'not-an-ip; drop' },
    ]);
    expect(rules).toContain('elements = { 10.0.0.2 . 10.2.0.20 }');
    expect(rules).not.toContain('not-an-ip');
    expect(rules).toContain('iifname "vabcdwg" ip saddr . ip daddr @reach accept');
    expect(rules).toMatch(/iifname "vabcdwg" drop[\s\S]*oifname "vabcdwg" ct state established,related accept\n\s*oifname "vabcdwg" drop/);
    expect(rules).toMatch(/chain input \{[^}]*iifname "vabcdwg" drop/);
    expect(rules).toMatch(/chain postrouting \{[^}]*iifname "vabcdwg" masquerade/);
    expect(vpnRuleset('vabcdwg', [])).not.toContain('elements');
    expect(() => vpnRuleset('bad name"', [])).toThrow();
  });

  itIf(firstMissing(missingRoot(), missingPrograms('nft')))('is a ruleset nft accepts', () => {
    const rules = vpnRuleset('vabcdwg', [{ user: '10.0.0.2', guest: '10.2.0.20' }]);
    execFileSync('nft', ['-c', '-f', '-'], { input: rules });
  });
});
