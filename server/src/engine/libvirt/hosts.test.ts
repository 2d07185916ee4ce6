import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FleetDriver } from '../fleet';
import type { HostDirectory, HostStatus } from '../hosts';
import type { HypervisorDriver } from '../driver';
import { FleetHostDirectory, fingerprintOf } from './hosts';

const dir = mkdtempSync('/tmp/fleet-hosts-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const localStatus = { online: true, cpuModel: 'here', cpus: 2, memoryMb: 1, freeMemoryMb: 1, running: 0, startsInFlight: 0, pools: [], guestNetwork: false, lastError: null, checkedAt: '' } satisfies HostStatus;
const directory = () =>
  new FleetHostDirectory({
    fleet: new FleetDriver({ onEvent: () => () => undefined } as unknown as HypervisorDriver),
    local: { status: async (id: string) => (id === 'local' ? localStatus : null) } as HostDirectory,
    dataDir: dir,
  });

describe('FleetHostDirectory', () => {
  it('prints a host key\'s fingerprint as ssh-keygen -lf does', () => {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
    const body = readFileSync(join(dir, 'k.pub'), 'utf8').split(' ')[1]!;
    const printed = execFileSync('ssh-keygen', ['-lf', join(dir, 'k.pub')], { encoding: 'utf8' }).split(' ')[1];
    expect(fingerprintOf(body)).toBe(printed);
  });

  it('answers local from this machine, and null for a host it does not hold', async () => {
    const hosts = directory();
    expect(await hosts.status('local')).toBe(localStatus);
    expect(await hosts.status('nobody')).toBeNull();
  });

  it('refuses what it cannot connect, holding nothing: a bad URI, a host that does not answer (ssh or TLS)', async () => {
    const hosts = directory();
    await expect(hosts.hostKey('not a uri')).rejects.toMatchObject({ code: 'uri_invalid' });
    await expect(hosts.hostKey('qemu+tls://127.0.0.1:23498/system')).rejects.toMatchObject({ code: 'unreachable' });
    // Nothing listens on this port of ours: refused at once.
    await expect(hosts.hostKey('qemu+ssh://root@127.0.0.1:23499/system')).rejects.toMatchObject({ code: 'unreachable' });
    await expect(hosts.connect('h1', 'qemu+ssh://root@127.0.0.1:23499/system', { hostKeyFingerprint: 'SHA256:x' })).rejects.toMatchObject({ code: 'unreachable' });
    expect(await hosts.status('h1')).toBeNull();
    expect(await hosts.installationPublicKey()).toMatch(/^ssh-ed25519 /);
  });

  it('a stored host that does not answer at start is offline, told to the listeners once', async () => {
    const hosts = directory();
    const told: string[] = [];
    hosts.onOffline((id, reason) => told.push(`${id}: ${reason}`));
    hosts.resume('h2', 'qemu+ssh://root@127.0.0.1:23499/system', { hostKeyFingerprint: 'SHA256:x' });
    await vi.waitFor(() => expect(told).toHaveLength(1), { timeout: 15_000, interval: 50 });
    expect(told[0]).toMatch(/^h2: /);
    expect(await hosts.status('h2')).toMatchObject({ online: false, lastError: expect.any(String) });
    await hosts.disconnect('h2');
    expect(told).toHaveLength(1);
    expect(await hosts.status('h2')).toBeNull();
  });
});
