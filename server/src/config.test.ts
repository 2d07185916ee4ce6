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

describe('several processes of one installation', () => {
  it('names the process host:port unless SERVER_ID says, runs the local hypervisor unless turned off, drains for no time by default', () => {
    const c = loadConfig({ ...base, PORT: '8091' });
    expect(c.serverId).toMatch(/^.+:8091$/);
    expect(c.localHypervisor).toBe(true);
    expect(c.shutdownDrainSeconds).toBe(0);
    const other = loadConfig({ ...base, SERVER_ID: 'p2', LOCAL_HYPERVISOR: 'off', SHUTDOWN_DRAIN_SECONDS: '3' });
    expect([other.serverId, other.localHypervisor, other.shutdownDrainSeconds]).toEqual(['p2', false, 3]);
    expect(() => loadConfig({ ...base, SERVER_ID: 'p 2; rm' })).toThrow(/SERVER_ID/);
  });

  it('holds as many PostgreSQL connections as DATABASE_POOL_SIZE says, the database adapter\'s default without it', () => {
    expect(loadConfig(base).databasePoolSize).toBeUndefined();
    expect(loadConfig({ ...base, DATABASE_POOL_SIZE: '5' }).databasePoolSize).toBe(5);
    for (const v of ['1', '0', 'ten', '2.5', '1000']) expect(() => loadConfig({ ...base, DATABASE_POOL_SIZE: v })).toThrow(/DATABASE_POOL_SIZE/);
  });
});
