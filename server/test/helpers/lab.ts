// The cluster tests' lab (server/src/host/lab.ts): what it needs on this machine, a lab started in
// a folder of its own with its namespaces noted for the run's sweep, its hosts trusting a test
// server's installation key and added to that server through the admin API, and a host's libvirtd
// asked directly (on its own socket, not through the server).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ZAdminHypervisor, ZAdminHypervisorHostKey, type TAdminHypervisor } from '@vdi/contracts';
import { registerLink, registerNamespace } from '../../../scripts/lib/test-run.mjs';
import { startLab, type Lab, type LabHost, type LabOptions } from '../../src/host/lab';
import { ensureSshIdentity, publicKey } from '../../src/host/ssh-identity';
import { missingPrograms, type Missing } from './can-run';
import { call, type TestServer } from './server';
import { scaled } from './slowdown';

const A = '/api/v3/admin';

/** The programs a lab runs (and `more` a file needs besides). */
export const labProgramsMissing = (...more: string[]): Missing =>
  missingPrograms('libvirtd', 'virsh', 'sshd', 'ssh-keygen', 'ssh-keyscan', 'unshare', 'qemu-system-x86_64', ...more);

/** A lab tag: `prefix` then random base-36 digits, 6 characters at most (the lab's link names are short). */
export const labTag = (prefix: string) => `${prefix}${BigInt(`0x${randomBytes(4).toString('hex')}`).toString(36)}`.slice(0, 6);

export type TestLabOptions = Omit<LabOptions, 'dir' | 'timeoutMs'> & { dir: string };
export type TestLab = Lab & { /** stops the lab and removes its folder */ close: () => Promise<void> };

/** Starts a lab in `dir` (made by the caller; `close` removes it), its namespaces noted first. */
export async function startTestLab(opts: TestLabOptions): Promise<TestLab> {
  const pending = startLab({ ...opts, timeoutMs: scaled(30_000) });
  for (let i = 1; i <= (opts.hosts ?? 3); i++) registerNamespace(`vdilab-${opts.tag}-${i}`);
  registerLink(`vdilab${opts.tag}`);
  const lab = await pending;
  return {
    ...lab,
    async close() {
      await lab.stop();
      rmSync(opts.dir, { recursive: true, force: true });
    },
  };
}

/**
 * A lab in a new folder `/tmp/<folder>-…` whose hosts trust `server`'s installation key (made when
 * missing). `sharedStorage`: the installation's storage folder is every host's `default` pool at the
 * same path (as an NFS mount would be); else the hosts share the lab's own `shared` folder.
 */
export async function startServerLab(
  server: TestServer,
  opts: Omit<TestLabOptions, 'dir' | 'authorizedKeys' | 'sharedPool'> & { folder: string; sharedStorage?: boolean },
): Promise<TestLab> {
  const { folder, sharedStorage, ...rest } = opts;
  await ensureSshIdentity(server.config.dataDir);
  return startTestLab({
    ...rest,
    dir: mkdtempSync(`/tmp/${folder}-`),
    authorizedKeys: [await publicKey(server.config.dataDir)],
    ...(sharedStorage ? { sharedPool: { name: 'default', path: join(server.config.dataDir, 'storage') } } : {}),
  });
}

/** Adds lab hosts as hypervisors through the admin API, each with the host key's fingerprint the server showed first. */
export async function addLabHosts(server: TestServer, adminToken: string, hosts: LabHost[]): Promise<TAdminHypervisor[]> {
  const views: TAdminHypervisor[] = [];
  for (const h of hosts) {
    const first = await call(server, `${A}/hypervisors`, { token: adminToken, body: { uri: h.uri } });
    const key = ZAdminHypervisorHostKey.parse(await first.json());
    const added = await call(server, `${A}/hypervisors`, { token: adminToken, body: { uri: h.uri, name: h.name, host_key_fingerprint: key.fingerprint } });
    expect(added.status).toBe(201);
    views.push(ZAdminHypervisor.parse(await added.json()));
  }
  return views;
}

/** The server's own host takes no new starts: they go to the lab. */
export async function startsOnLabOnly(server: TestServer, adminToken: string) {
  expect((await call(server, `${A}/hypervisors/local`, { token: adminToken, method: 'PUT', body: { enabled: false } })).status).toBe(200);
}

/** `virsh -q` on a lab host's own libvirtd socket: the lines of its answer, trimmed, without empty ones. */
export const virshOn = (host: LabHost, ...args: string[]) =>
  execFileSync('virsh', ['-q', '-c', `qemu:///system?socket=${host.socket}`, ...args], { encoding: 'utf8', timeout: scaled(30_000) })
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
