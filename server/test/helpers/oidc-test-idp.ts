// Test helper: the OpenID provider of oidc-idp.mjs (the `oidc-provider` library) started as a child process on
// a free loopback port, with a client, secret and password generated here, and its accounts; `close` ends it.
// The child inherits the test run's mark (VDI_TEST_RUN), so a run's sweep finds it should a test die first.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { scaled } from './slowdown';

export type OidcIdp = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** every account's password */
  password: string;
  /** the accounts: a teacher (groups teachers, staff), a student (students), someone in no mapped group (visitors) */
  accounts: { teacher: string; student: string; outsider: string };
  /** Everything it wrote. */
  output(): string;
  close(): Promise<void>;
};

/**
 * `publicUrl`: the portal's public address (its callbacks are `<publicUrl>/authentication/oidc/callback/<id>`,
 * its post-logout address `<publicUrl>/login`).
 */
export async function startOidcIdp(publicUrl: string): Promise<OidcIdp> {
  const base = publicUrl.replace(/\/$/, '');
  const clientId = `portal-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const child = spawn(process.execPath, [join(import.meta.dirname, 'oidc-idp.mjs')], {
    env: {
      ...process.env,
      IDP_CLIENT_ID: clientId,
      IDP_CLIENT_SECRET: clientSecret,
      IDP_REDIRECT_PREFIX: `${base}/authentication/oidc/callback/`,
      IDP_POST_LOGOUT_URIS: `${base}/login`,
      IDP_PASSWORD: password,
      NODE_ENV: 'test',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the OpenID provider did not start:\n${out}`)), scaled(30_000));
    const look = () => {
      const url = /listening (\S+)/.exec(out)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    };
    child.stdout!.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the OpenID provider ended (${code}):\n${out}`));
    });
  });
  return {
    issuer,
    clientId,
    clientSecret,
    password,
    accounts: { teacher: 'ada-teacher', student: 'sam-student', outsider: 'olly-outsider' },
    output: () => out,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), scaled(5_000));
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
