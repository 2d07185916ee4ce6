// The installation's SSH identity: the key pair the server reaches hypervisors with (`qemu+ssh://`),
// generated once with ssh-keygen and kept under DATA_DIR/ssh/ (0600), and one known_hosts file per
// hypervisor holding the host key an admin confirmed. No key is ever logged or put in a message.
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runProgram } from './programs';

/** The folder of the installation's SSH files (created 0700). */
export const sshDir = (dataDir: string) => join(dataDir, 'ssh');

/** The private key's file (what `keyfile=` in a libvirt URI names). */
export const privateKeyFile = (dataDir: string) => join(sshDir(dataDir), 'id_ed25519');

const making = new Map<string, Promise<void>>();

/** The key pair, generated once (ed25519, no passphrase: the server starts unattended); two callers at once share one run. */
export function ensureSshIdentity(dataDir: string): Promise<void> {
  const key = privateKeyFile(dataDir);
  let pending = making.get(key);
  if (!pending) {
    pending = (async () => {
      if (await readFile(`${key}.pub`, 'utf8').then(() => true, () => false)) return;
      await mkdir(sshDir(dataDir), { recursive: true, mode: 0o700 });
      // Made beside and renamed into place: a server killed half-way leaves no half a key pair.
      const partial = `${key}.new`;
      await Promise.all([partial, `${partial}.pub`].map((f) => rm(f, { force: true })));
      await runProgram('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'vdi-portal', '-f', partial], { timeoutMs: 30_000 });
      await chmod(partial, 0o600);
      await chmod(`${partial}.pub`, 0o600);
      await rename(partial, key);
      await rename(`${partial}.pub`, `${key}.pub`);
    })().finally(() => making.delete(key));
    making.set(key, pending);
  }
  return pending;
}

/** The public key (`ssh-ed25519 AAAA… vdi-portal`), for the console to show for copying to a host's authorized_keys. */
export async function publicKey(dataDir: string): Promise<string> {
  await ensureSshIdentity(dataDir);
  return (await readFile(`${privateKeyFile(dataDir)}.pub`, 'utf8')).trim();
}

/** A host key as known_hosts holds it: its type and base64 body (a comment dropped). */
const HOST_KEY = /^(ssh-ed25519|ecdsa-sha2-nistp(?:256|384|521)|ssh-rsa|sk-ssh-ed25519@openssh\.com) ([A-Za-z0-9+/]+={0,2})(?:[ \t][^\r\n]*)?$/;
/** A hypervisor's id as a file name. */
const HYPERVISOR_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Type and body of a host key line (`ssh-ed25519 AAAA…`), or undefined when it is not one. */
export function parseHostKey(line: string): string | undefined {
  const m = HOST_KEY.exec(line.trim());
  return m ? `${m[1]} ${m[2]}` : undefined;
}

/** The known_hosts file of one hypervisor (what `known_hosts=` in its libvirt URI names). */
export function knownHostsFile(dataDir: string, hypervisorId: string): string {
  if (!HYPERVISOR_ID.test(hypervisorId)) throw new Error('not a hypervisor id');
  return join(sshDir(dataDir), 'known_hosts.d', hypervisorId);
}

/** A shell word: the text between single quotes (a quote inside closed, escaped, reopened). */
const shellWord = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The ssh program libvirt runs to reach hypervisor `hypervisorId` (`command=` in its `qemu+ssh` URI):
 * the system's ssh with that hypervisor's known_hosts only and strict host key checking (libvirt 9's
 * `ssh` transport passes no `known_hosts` of its own; docs/decisions/0009-fleet-ssh-transport.md), no user
 * configuration, only the key libvirt names. Written 0700 beside the known_hosts file; its path is returned.
 */
export async function writeSshCommand(dataDir: string, hypervisorId: string): Promise<string> {
  const knownHosts = knownHostsFile(dataDir, hypervisorId);
  const file = `${knownHosts}.ssh`;
  const options = ['-F', '/dev/null', '-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'GlobalKnownHostsFile=/dev/null', '-o', 'StrictHostKeyChecking=yes', '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes'];
  await mkdir(join(sshDir(dataDir), 'known_hosts.d'), { recursive: true, mode: 0o700 });
  await writeFile(`${file}.new`, `#!/bin/sh\n# libvirt's ssh to one hypervisor: its confirmed host key only.\nexec ssh ${options.map(shellWord).join(' ')} "$@"\n`, { mode: 0o700 });
  await rename(`${file}.new`, file);
  return file;
}

/** How known_hosts names a host: its name or address, `[host]:port` when the port is not 22. */
const knownHostName = (host: string, port = 22) => (port === 22 ? host : `[${host}]:${port}`);

/** Writes the confirmed host key of a hypervisor (replacing what was there), 0600. */
export async function writeKnownHost(dataDir: string, hypervisorId: string, host: { name: string; port?: number }, hostKey: string): Promise<void> {
  const key = parseHostKey(hostKey);
  if (!key) throw new Error('not an SSH host key');
  if (!/^[A-Za-z0-9.:_-]+$/.test(host.name)) throw new Error('not a host name');
  const file = knownHostsFile(dataDir, hypervisorId);
  await mkdir(join(sshDir(dataDir), 'known_hosts.d'), { recursive: true, mode: 0o700 });
  await writeFile(`${file}.new`, `${knownHostName(host.name, host.port)} ${key}\n`, { mode: 0o600 });
  await rename(`${file}.new`, file);
}

/** The confirmed host key of a hypervisor (`ssh-ed25519 AAAA…`), or undefined before one was confirmed. */
export async function readKnownHost(dataDir: string, hypervisorId: string): Promise<string | undefined> {
  const text = await readFile(knownHostsFile(dataDir, hypervisorId), 'utf8').catch(() => '');
  const line = text.split('\n').find((l) => l.trim() && !l.startsWith('#'));
  return line ? parseHostKey(line.trim().split(/\s+/).slice(1).join(' ')) : undefined;
}
