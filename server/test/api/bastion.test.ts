import { scaled } from '../helpers/slowdown';
import { execFileSync } from 'node:child_process';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import ssh2, { type Server as SshServer } from 'ssh2';
import { bastionAddresses, bastionHostName, ZBastion, ZUserConfig } from '@vdi/contracts';
import { schema } from '../../src/db';
import { newHostKey } from '../../src/modules/bastion/service';
import { call, startTestServer, type TestServer } from '../helpers/server';
import { makeDesktop, tokenOf, userRow } from '../helpers/routes-fixtures';
import { curlResolve, ssh, sshKey } from '../helpers/bastion-clients';
const { Server: SshServerClass } = ssh2;

// The bastion with real clients (OpenSSH's ssh, curl) against stand-in guests on loopback: an SSH
// server that checks the desktop's guest credentials and runs the command, a web server on HTTP
// and one on HTTPS. (The same with the real demo guest on the guest network: vpn-bastion-guest.test.ts.)

const DOMAIN = 'bastion.test';
let server: TestServer;
let token: string;
let desktopId: string;
let guestSsh: SshServer;
let guestHttp: HttpServer;
let guestHttps: HttpServer;
const port = (s: { address(): unknown }) => (s.address() as AddressInfo).port;
const seen: { user?: string; password?: string } = {};

function standInSshGuest(): Promise<SshServer> {
  const s = new SshServerClass({ hostKeys: [newHostKey()] }, (client) => {
    client.on('authentication', (ctx) => {
      if (ctx.method === 'password') {
        seen.user = ctx.username;
        seen.password = ctx.password;
        if (ctx.username === 'demo' && ctx.password === 'guest-pass') return ctx.accept();
      }
      ctx.reject(['password']);
    });
    client.on('ready', () =>
      client.on('session', (accept) => {
        const session = accept();
        session.on('exec', (acc, _rej, info) => {
          const ch = acc();
          ch.write(`guest ran: ${info.command}\n`);
          ch.exit(0);
          ch.end();
        });
      }),
    );
  });
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r(s)));
}

beforeAll(async () => {
  server = await startTestServer({
    env: { BASTION_SSH_PORT: '0', BASTION_HTTP_PORT: '0', BASTION_HTTPS_PORT: '0', BASTION_HOST: '127.0.0.1', BASTION_DOMAIN: DOMAIN },
  });
  token = await tokenOf(server, 'user');
  const user = await userRow(server, 'user');
  const desktop = await makeDesktop(server, user);
  desktopId = desktop.id;
  const guest = { credentials: { username: 'demo', password: 'guest-pass' }, fullscreen: false, viewers: { browser_vnc: { options: null } } };
  await server.ctx.db.update(schema.domains).set({ guestProperties: guest }).where(eq(schema.domains.id, desktopId));
  guestSsh = await standInSshGuest();
  guestHttp = createHttpServer((_q, r) => r.end('plain page of the guest')).listen(0, '127.0.0.1');
  const dir = mkdtempSync(join(tmpdir(), 'vpnb-tls-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=guest', '-keyout', join(dir, 'k'), '-out', join(dir, 'c')], { stdio: 'ignore' });
  const [key, cert] = [readFileSync(join(dir, 'k')), readFileSync(join(dir, 'c'))];
  rmSync(dir, { recursive: true, force: true });
  guestHttps = createHttpsServer({ key, cert }, (_q, r) => r.end('tls page of the guest')).listen(0, '127.0.0.1');
  await new Promise((r) => guestHttps.once('listening', r));
}, scaled(120_000));

afterAll(async () => {
  guestSsh?.close();
  guestHttp?.close();
  guestHttps?.close();
  await server?.close();
});

const started = (on: boolean) =>
  server.ctx.db.update(schema.domains).set(on ? { status: 'Started', guestIp: '127.0.0.1' } : { status: 'Stopped', guestIp: null }).where(eq(schema.domains.id, desktopId));

describe('the bastion', () => {
  it('is off until an admin turns it on: 403 bastion_not_allowed, and the config says so', async () => {
    const cfg = ZUserConfig.parse(await (await call(server, '/api/v3/user/config', { token })).json());
    expect(cfg).toMatchObject({ can_use_bastion: false, bastion_ssh_port: null, bastion_domain: null });
    const res = await call(server, `/api/v3/desktop/bastion/${desktopId}`, { token });
    expect(res.status).toBe(403);
    expect((await res.json()).description_code).toBe('bastion_not_allowed');
    await server.ctx.settings.set('bastion', { enabled: true });
    const after = ZUserConfig.parse(await (await call(server, '/api/v3/user/config', { token })).json());
    expect(after).toMatchObject({
      can_use_bastion: true,
      bastion_domain: DOMAIN,
      bastion_ssh_port: String(server.app.bastion.ports.ssh),
      http_port: String(server.app.bastion.ports.http),
      https_port: String(server.app.bastion.ports.https),
    });
  });

  it('makes a target on the first read, lists it, and refuses malformed or too many keys with a code', async () => {
    const first = ZBastion.parse(await (await call(server, `/api/v3/desktop/bastion/${desktopId}`, { token })).json());
    expect(first).toMatchObject({ desktop_id: desktopId, http: { enabled: false, http_port: 80, https_port: 443 }, ssh: { enabled: false, port: 22, authorized_keys: [] } });
    const again = ZBastion.parse(await (await call(server, `/api/v3/desktop/bastion/${desktopId}`, { token })).json());
    expect(again.id).toBe(first.id);
    const list = await (await call(server, '/api/v3/bastions', { token })).json();
    expect(list.map((b: { id: string }) => b.id)).toEqual([first.id]);

    const good = sshKey().publicKey;
    const bad = await call(server, `/api/v3/desktop/bastion/${desktopId}`, { token, method: 'PUT', body: { ssh: { authorized_keys: `${good}\nssh-rsa not-a-key` } } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ description_code: 'bastion_authorized_key_invalid', params: { line: 2 } });
    const huge = await call(server, `/api/v3/desktop/bastion/${desktopId}`, { token, method: 'PUT', body: { ssh: { authorized_keys: [`ssh-ed25519 ${'A'.repeat(40_000)}`] } } });
    expect(huge.status).toBe(400);
    const many = await call(server, `/api/v3/desktop/bastion/${desktopId}`, { token, method: 'PUT', body: { ssh: { authorized_keys: Array.from({ length: 51 }, () => sshKey().publicKey) } } });
    expect((await many.json()).description_code).toBe('bastion_authorized_keys_too_many');
    // nothing was written by the refused calls
    const still = ZBastion.parse(await (await call(server, `/api/v3/desktop/bastion/${desktopId}`, { token })).json());
    expect(still.ssh.authorized_keys).toEqual([]);
    // another user's desktop is not theirs
    const other = await call(server, `/api/v3/desktop/bastion/${desktopId}`, { token: await tokenOf(server, 'student02') });
    expect(other.status).toBe(403);
  });

  it('relays OpenSSH to the started desktop with its key; refuses a wrong key, a stopped desktop and unknown names', async () => {
    const key = sshKey();
    const wrong = sshKey();
    const put = await call(server, `/api/v3/desktop/bastion/${desktopId}`, {
      token,
      method: 'PUT',
      body: { ssh: { enabled: true, port: port(guestSsh), authorized_keys: `# laptop\n${key.publicKey}\n` } },
    });
    expect(put.status).toBe(200);
    const target = ZBastion.parse(await put.json());
    expect(target.ssh.authorized_keys).toEqual([key.publicKey]);
    const sshPort = server.app.bastion.ports.ssh!;

    await started(true);
    const ok = await ssh({ key: key.file, port: sshPort, user: target.id, command: 'echo hello from the test' });
    expect(ok.stdout).toBe('guest ran: echo hello from the test\n');
    expect(ok.code).toBe(0);
    expect(seen).toEqual({ user: 'demo', password: 'guest-pass' }); // signed in with the desktop's guest credentials

    const refused = await ssh({ key: wrong.file, port: sshPort, user: target.id, command: 'true' });
    expect(refused.code).toBe(255);
    expect(refused.stderr).toMatch(/Permission denied/);

    const t0 = Date.now();
    const unknown = await ssh({ key: key.file, port: sshPort, user: '00000000-0000-4000-8000-000000000000', command: 'true' });
    expect(unknown.code).toBe(255);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000); // delayed
    expect((await ssh({ key: key.file, port: sshPort, user: 'root', command: 'true' })).code).toBe(255);

    await started(false);
    const stopped = await ssh({ key: key.file, port: sshPort, user: target.id, command: 'true' });
    expect(stopped.code).toBe(255);
    expect(stopped.stderr).toMatch(/Permission denied/);
  });

  it("routes http and https names to the desktop's ports 80/443 (TLS not terminated); other names get nothing", async () => {
    const put = await call(server, `/api/v3/desktop/bastion/${desktopId}`, {
      token,
      method: 'PUT',
      body: { http: { enabled: true, http_port: port(guestHttp), https_port: port(guestHttps) } },
    });
    const target = ZBastion.parse(await put.json());
    const name = bastionHostName(target.id, DOMAIN);
    const { http, https } = server.app.bastion.ports;
    await started(true);
    expect((await curlResolve({ scheme: 'http', name, port: http! })).stdout).toBe('plain page of the guest');
    const tls = await curlResolve({ scheme: 'https', name, port: https! });
    expect(tls.stdout).toBe('tls page of the guest');

    // names of nothing: an unknown target, another domain, a plain address
    const unknown = bastionHostName('00000000-0000-4000-8000-000000000000', DOMAIN);
    const r1 = await curlResolve({ scheme: 'http', name: unknown, port: http! });
    expect(r1.stdout).toBe('');
    expect((await curlResolve({ scheme: 'https', name: unknown, port: https! })).code).not.toBe(0);
    expect((await curlResolve({ scheme: 'https', name: `${name}.evil.example`, port: https! })).code).not.toBe(0);

    // a stopped desktop: nothing either
    await started(false);
    expect((await curlResolve({ scheme: 'http', name, port: http! })).stdout).toBe('');
    expect((await curlResolve({ scheme: 'https', name, port: https! })).code).not.toBe(0);

    // http turned off
    await started(true);
    await call(server, `/api/v3/desktop/bastion/${desktopId}`, { token, method: 'PUT', body: { http: { enabled: false } } });
    expect((await curlResolve({ scheme: 'http', name, port: http! })).stdout).toBe('');
    await started(false);
  });

  it('comes back with its desktop from the recycle bin: same target id, SSH and HTTP settings, keys; the saved ssh command works again', async () => {
    const key = sshKey();
    const put = await call(server, `/api/v3/desktop/bastion/${desktopId}`, {
      token,
      method: 'PUT',
      body: { http: { enabled: true, http_port: port(guestHttp), https_port: port(guestHttps) }, ssh: { enabled: true, port: port(guestSsh), authorized_keys: [key.publicKey] } },
    });
    const before = ZBastion.parse(await put.json());
    expect((await call(server, `/api/v3/desktop/${desktopId}`, { token, method: 'DELETE' })).status).toBe(200);
    const [item] = await (await call(server, '/api/v3/recycle_bin/item_count/user', { token })).json();
    expect(item).toMatchObject({ item_type: 'desktop', desktops: 1 });
    expect((await call(server, `/api/v3/recycle_bin/restore/${item.id}`, { token, method: 'PUT' })).status).toBe(200);

    const after = ZBastion.parse(await (await call(server, `/api/v3/desktop/bastion/${desktopId}`, { token })).json());
    expect(after).toEqual(before);
    await started(true);
    const ok = await ssh({ key: key.file, port: server.app.bastion.ports.ssh!, user: before.id, command: 'echo back again' });
    expect(ok.stdout).toBe('guest ran: echo back again\n');
    await started(false);
  });
});

/**
 * Issue 23, finding 5: the address shown is one the bastion serves. Without BASTION_DOMAIN and without a
 * public address the portal showed `<target>.127.0.0.1` (the request's host) while the proxy matched names
 * under `localhost`; one function now decides the domain for both.
 */
describe('the bastion domain by default', () => {
  it('shows an address the HTTP listener serves: under localhost, then under the public address set by an admin', async () => {
    const plain = await startTestServer({ env: { BASTION_HTTP_PORT: '0', BASTION_HOST: '127.0.0.1' } });
    try {
      await plain.ctx.settings.set('bastion', { enabled: true });
      const owner = await tokenOf(plain, 'user');
      const desktop = await makeDesktop(plain, await userRow(plain, 'user'));
      const put = await call(plain, `/api/v3/desktop/bastion/${desktop.id}`, { token: owner, method: 'PUT', body: { http: { enabled: true, http_port: port(guestHttp) } } });
      const target = ZBastion.parse(await put.json());
      await plain.ctx.db.update(schema.domains).set({ status: 'Started', guestIp: '127.0.0.1' }).where(eq(schema.domains.id, desktop.id));
      const shown = async () => {
        const cfg = ZUserConfig.parse(await (await call(plain, '/api/v3/user/config', { token: owner })).json());
        const url = new URL(bastionAddresses(target.id, cfg)!.http);
        return { domain: cfg.bastion_domain, name: url.hostname, port: Number(url.port) };
      };
      const local = await shown();
      expect(local.domain).toBe('localhost');
      expect(local.port).toBe(plain.app.bastion.ports.http);
      expect((await curlResolve({ scheme: 'http', name: local.name, port: local.port })).stdout).toBe('plain page of the guest');

      const admin = await tokenOf(plain, 'admin');
      expect((await call(plain, '/api/v3/admin/settings/public_address', { token: admin, method: 'PUT', body: { url: 'https://vdi.example.org' } })).status).toBe(200);
      const pub = await shown();
      expect(pub.domain).toBe('vdi.example.org');
      expect((await curlResolve({ scheme: 'http', name: pub.name, port: pub.port })).stdout).toBe('plain page of the guest');
      // The old default is no longer served.
      expect((await curlResolve({ scheme: 'http', name: local.name, port: local.port })).stdout).toBe('');
    } finally {
      await plain.close();
    }
  }, scaled(120_000));
});
