import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';

const base = { DATA_DIR: '/tmp/vdi-config-test', SECRET: 'a-secret-of-sixteen-chars' };

describe('TRUST_PROXY', () => {
  it('is off by default: no forwarded header is believed', () => {
    expect(loadConfig(base).trustProxy).toEqual([]);
    expect(loadConfig({ ...base, TRUST_PROXY: '0' }).trustProxy).toEqual([]);
  });

  it('takes a list of proxy addresses and CIDRs', () => {
    expect(loadConfig({ ...base, TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback' }).trustProxy).toEqual([
      '127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', 'loopback',
    ]);
  });

  it('refuses "trust everyone" and malformed entries', () => {
    for (const v of ['1', 'true', '10.0.0.0/33', 'proxy.example', '10.0.0.1/8/1']) {
      expect(() => loadConfig({ ...base, TRUST_PROXY: v })).toThrow(/TRUST_PROXY/);
    }
  });
});
