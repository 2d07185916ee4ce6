// The real clients of the bastion tests: OpenSSH's ssh with a key made by ssh-keygen, and curl.
import { scaled } from './slowdown';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

export type RunResult = { code: number; stdout: string; stderr: string };

export function runClient(cmd: string, args: string[], timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: scaled(timeoutMs) }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** A fresh ed25519 key pair from ssh-keygen: the private key's file and the public key's line (removed when the test that made it ends). */
export function sshKey(): { file: string; publicKey: string } {
  const dir = mkdtempSync(join(tmpdir(), 'vpnb-key-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'id_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bastion-test', '-f', file]);
  return { file, publicKey: readFileSync(`${file}.pub`, 'utf8').trim() };
}

/** `ssh -i key -p port user@host command` without prompts or known-hosts files. */
export function ssh(o: { key: string; port: number; user: string; host?: string; command: string; timeoutMs?: number }) {
  return runClient(
    'ssh',
    [
      '-i', o.key, '-p', String(o.port),
      '-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
      '-o', 'ConnectTimeout=20', '-o', 'LogLevel=ERROR',
      `${o.user}@${o.host ?? '127.0.0.1'}`, o.command,
    ],
    o.timeoutMs ?? 90_000,
  );
}

/** curl of `scheme://name:port/path` with the name resolved to `address` (as a DNS entry for the bastion domain would). */
export function curlResolve(o: { scheme: 'http' | 'https'; name: string; port: number; address?: string; path?: string }) {
  return runClient('curl', ['-sS', '-k', '--max-time', '30', '--resolve', `${o.name}:${o.port}:${o.address ?? '127.0.0.1'}`, `${o.scheme}://${o.name}:${o.port}${o.path ?? '/'}`]);
}
