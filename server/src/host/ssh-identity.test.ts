import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureSshIdentity, knownHostsFile, parseHostKey, privateKeyFile, publicKey, readKnownHost, sshDir, writeKnownHost } from './ssh-identity';

const dataDir = mkdtempSync('/tmp/lab-identity-');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("the installation's SSH identity", () => {
  it('is made once (two callers at once share it), ed25519, private to the server', async () => {
    await Promise.all([ensureSshIdentity(dataDir), ensureSshIdentity(dataDir)]);
    const first = await publicKey(dataDir);
    expect(first).toMatch(/^ssh-ed25519 [A-Za-z0-9+/]+=* vdi-portal$/);
    await ensureSshIdentity(dataDir);
    expect(await publicKey(dataDir)).toBe(first);
    expect(statSync(privateKeyFile(dataDir)).mode & 0o777).toBe(0o600);
    expect(statSync(sshDir(dataDir)).mode & 0o777).toBe(0o700);
    expect(readFileSync(privateKeyFile(dataDir), 'utf8')).toContain('OPENSSH PRIVATE KEY');
  });

  it("keeps one hypervisor's confirmed host key in its own known_hosts file", async () => {
    const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ0qYhQoNpDd1m0d5WmCAv0J2JZ4vJ0aZ3oEw9k6c1Xy';
    expect(await readKnownHost(dataDir, 'hyp-1')).toBeUndefined();
    await writeKnownHost(dataDir, 'hyp-1', { name: '10.231.1.11' }, `${key} root@host1`);
    expect(readFileSync(knownHostsFile(dataDir, 'hyp-1'), 'utf8')).toBe(`10.231.1.11 ${key}\n`);
    expect(await readKnownHost(dataDir, 'hyp-1')).toBe(key);
    await writeKnownHost(dataDir, 'hyp-2', { name: 'host2.example', port: 2222 }, key);
    expect(readFileSync(knownHostsFile(dataDir, 'hyp-2'), 'utf8')).toBe(`[host2.example]:2222 ${key}\n`);
    expect(statSync(knownHostsFile(dataDir, 'hyp-2')).mode & 0o777).toBe(0o600);
  });

  it('refuses what is not a host key, a host name or a hypervisor id', async () => {
    expect(parseHostKey('not a key')).toBeUndefined();
    await expect(writeKnownHost(dataDir, 'hyp-3', { name: 'h' }, 'ssh-ed25519 AAAA\nevil.example ssh-ed25519 AAAA')).rejects.toThrow();
    await expect(writeKnownHost(dataDir, 'hyp-3', { name: 'h evil' }, 'ssh-ed25519 AAAA')).rejects.toThrow();
    expect(() => knownHostsFile(dataDir, '../x')).toThrow();
    expect(knownHostsFile(dataDir, 'ok_1')).toBe(join(sshDir(dataDir), 'known_hosts.d', 'ok_1'));
  });
});
