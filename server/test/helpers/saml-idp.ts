// A SAML IdP for a test (saml-idp-server.mjs in its own process, with a key and certificate made here by openssl):
// its address and metadata address; close() ends it and removes its files.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scaled } from './slowdown';

export type SamlIdp = { url: string; metadataUrl: string; output(): string; close(): Promise<void> };

/** Accounts of the test IdP (saml-idp-server.mjs): user name → password. */
export const IDP_ACCOUNTS = { teacher1: 'teacher-pass', student1: 'student-pass', outsider1: 'outsider-pass' } as const;

export async function startSamlIdp(): Promise<SamlIdp> {
  const dir = mkdtempSync(join(tmpdir(), 'saml-idp-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-sha256', '-subj', '/CN=test-idp', '-keyout', join(dir, 'idp.key'), '-out', join(dir, 'idp.crt')], { stdio: 'ignore' });
  // A child of the test run (it inherits VDI_TEST_RUN: the run's sweep finds it should a test die first).
  const child = spawn(process.execPath, [join(import.meta.dirname, 'saml-idp-server.mjs'), '--key', join(dir, 'idp.key'), '--cert', join(dir, 'idp.crt')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let ended = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => ((ended = true), resolve())));
  // Its first line says where it listens (no other module is needed: Playwright's journeys start it too).
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the SAML IdP did not start:\n${out}`)), scaled(30_000));
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { url: string }).url);
      }
    });
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the SAML IdP ended while starting:\n${out}`));
    });
  }).catch((err: unknown) => {
    // Nothing left behind when it did not start.
    if (!ended) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  return {
    url,
    metadataUrl: `${url}/metadata`,
    output: () => out,
    async close() {
      if (!ended) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
