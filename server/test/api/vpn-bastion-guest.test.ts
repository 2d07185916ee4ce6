// The user VPN and the bastion with a real guest on the guest network and real clients:
// wireguard-go in a namespace playing the user's computer (with the file the portal gave), curl and
// OpenSSH's ssh. Run with the demo guest of this branch (HTTPS on 443): VDI_TEST_IMAGES pointing to
// a cache built from scripts/guest/build-demo-guest.sh as it is now.
import { scaled } from '../helpers/slowdown';
import { createServer, type Server } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { bastionHostName, ZBastion, ZVpnConfig } from '@vdi/contracts';
import { schema } from '../../src/db';
import { ensureRdpGuest } from '../../src/engine/guest-image';
import { RDP_TEMPLATE_ID, seedRdpTemplate } from '../../src/seed/rdp-template';
import { formatCidr } from '../../src/network/plan';
import { call, loginToken, startTestServer, testImagesDir, type TestServer } from '../helpers/server';
import { freeGuestSubnet, guestNetworkMissing } from '../helpers/guest-network';
import { describeIf, firstMissing, missingPrograms } from '../helpers/can-run';
import { until } from '../helpers/wait';
import { curlResolve, runClient, ssh, sshKey } from '../helpers/bastion-clients';
import { parseWgQuick, userComputer, vpnBastionEnv, type UserComputer } from '../helpers/vpn-client';

const missing = firstMissing(guestNetworkMissing(), missingPrograms('wireguard-go', 'wg', 'nft', 'ssh', 'curl', 'xfreerdp', 'xvfb-run'));

const DOMAIN = 'bastion.test';

describeIf(missing)('user VPN and bastion with a real guest', () => {
  let server: TestServer;
  let pc: UserComputer;
  let desktopId: string;
  let guestIp: string;
  let rdpId: string;
  let rdpIp: string;
  const rdpPassword = `pw-${Math.random().toString(36).slice(2, 10)}`;
  let hostProbe: Server;
  const page = 'demo desktop';

  beforeAll(async () => {
    pc = await userComputer(freeGuestSubnet());
    server = await startTestServer({
      network: true,
      startConcurrency: 1,
      env: { ...(await vpnBastionEnv(pc, freeGuestSubnet(), DOMAIN)), GUEST_IP_TIMEOUT_SECONDS: '600' },
    });
    expect(server.app.vpn.available, String(server.app.vpn.reason)).toBe(true);
    await seedRdpTemplate(server.ctx.db, server.ctx.engine, await ensureRdpGuest(testImagesDir()));
    const [t] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.name, 'Demo Linux'));
    const create = async (body: Record<string, unknown>) => {
      const r = await call(server, '/api/v3/persistent_desktop', { token: await as('advanced'), body });
      expect(r.status).toBe(200);
      const id = ((await r.json()) as { id: string }).id;
      await until('stopped', async () => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0]?.status === 'Stopped', 30_000);
      expect((await call(server, `/api/v3/desktop/start/${id}`, { token: await as('advanced') })).status).toBe(200);
      return id;
    };
    // The demo guest (SSH, HTTP, HTTPS) and the "Debian desktop (RDP)" guest (xrdp), both on the guest network.
    desktopId = await create({ template_id: t!.id, name: 'Reached by VPN', hardware: { interfaces: ['wireguard'] }, guest_properties: { viewers: { browser_vnc: {}, file_rdpvpn: {} } } });
    rdpId = await create({ template_id: RDP_TEMPLATE_ID, name: 'RDP over VPN', guest_properties: { credentials: { username: 'alice', password: rdpPassword } } });
    // Two TCG guests boot side by side while the rest of the suite runs: minutes on a busy 2-core machine.
    const addressOf = (id: string) =>
      until(
        'the desktop started with an address',
        async () => {
          const [d] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id));
          return d?.status === 'Started' && d.guestIp ? d.guestIp : undefined;
        },
        540_000,
      );
    guestIp = await addressOf(desktopId);
    rdpIp = await addressOf(rdpId);
    // Something listening on the server's own address on the guest network: no tunnel may reach it.
    hostProbe = createServer((s) => s.end('host\n')).listen(0, '0.0.0.0');
  }, scaled(900_000));

  afterAll(async () => {
    hostProbe?.close();
    await pc?.close();
    const ifname = server?.app.vpn.ifname;
    await server?.close();
    if (ifname) {
      // The endpoint went with the network: no process and no interface left.
      await until('the endpoint gone', async () => (await runClient('wg', ['show', ifname])).code !== 0, 10_000);
    }
  });

  // Sessions are signed in when used: the guests take longer to boot than a session token lives.
  const as = (username: string) => loginToken(server, username);
  const config = async (username: string) => {
    const res = await call(server, '/api/v3/user/vpn/config', { token: await as(username) });
    expect(res.status).toBe(200);
    return ZVpnConfig.parse(await res.json());
  };

  it("gives each user a file whose tunnel reaches that user's own desktop, and only it", async () => {
    const file = await config('advanced');
    expect(file).toMatchObject({ kind: 'file', name: 'isard-vpn', ext: 'conf', mime: 'text/plain' });
    const c = parseWgQuick(file.content);
    expect(c.allowedIps).toBe(formatCidr(server.ctx.engine.network.plan!.subnet)); // the guests only
    expect(c.endpoint).toBe(`${pc.hostAddress}:${server.config.vpn.port}`);
    // the same file again: same keys
    expect((await config('advanced')).content).toBe(file.content);

    await pc.use(file.content);
    const got = await until('the guest page through the tunnel', async () => {
      const r = await pc.curl(`http://${guestIp}/`);
      return r.code === 0 ? r.stdout : undefined;
    }, scaled(90_000));
    expect(got).toContain(page);
    // The guest's SSH server through the tunnel too.
    expect((await pc.banner(guestIp, 22)).stdout).toMatch(/^SSH-2\.0-dropbear/);
    // Never the host: the server's own address on the guest network, nor the namespace's gateway.
    const plan = server.ctx.engine.network.plan!;
    const port = (hostProbe.address() as { port: number }).port;
    expect((await pc.banner(plan.host, port)).stdout).toBe('');
    expect((await runClient('bash', ['-c', `exec 3<>/dev/tcp/${plan.host}/${port} && head -c 5 <&3`])).stdout).toBe('host\n'); // it listens there
    expect((await pc.curl(`http://${plan.gateway}/`, 4)).code).not.toBe(0);

    // Another user's file: the tunnel comes up, but their own desktops only (none here).
    const theirs = await config('user');
    expect(parseWgQuick(theirs.content).address).not.toBe(c.address);
    await pc.use(theirs.content);
    await until('their handshake', async () => {
      await pc.curl(`http://${guestIp}/`, 2);
      return (await pc.lastHandshake()) !== null;
    }, scaled(30_000));
    expect((await pc.curl(`http://${guestIp}/`, 5)).code).not.toBe(0);
    // ...and it is the firewall that stops it: without the VPN's table the same tunnel gets through.
    await server.ctx.engine.network.exec('nft', ['delete', 'table', 'inet', 'vdi_vpn']);
    expect((await pc.curl(`http://${guestIp}/`, 8)).stdout).toContain(page);
    await server.app.vpn.sync(true);
    expect((await pc.curl(`http://${guestIp}/`, 5)).code).not.toBe(0);
  }, scaled(240_000));

  it("an admin's tunnel reaches others' desktops only when the `vpn` setting says so", async () => {
    await pc.use((await config('admin')).content);
    await until('the admin handshake', async () => {
      await pc.curl(`http://${guestIp}/`, 2);
      return (await pc.lastHandshake()) !== null;
    }, scaled(30_000));
    expect((await pc.curl(`http://${guestIp}/`, 4)).code).not.toBe(0);
    await server.ctx.settings.set('vpn', { admins_reach_all: true });
    await server.app.vpn.sync();
    expect((await pc.curl(`http://${guestIp}/`, 8)).stdout).toContain(page);
    await server.ctx.settings.set('vpn', { admins_reach_all: false });
    await server.app.vpn.sync();
    expect((await pc.curl(`http://${guestIp}/`, 4)).code).not.toBe(0);
  }, scaled(120_000));

  it("the RDP-over-VPN file opens the RDP desktop through the owner's tunnel (xfreerdp +auth-only), not through another's", async () => {
    const res = await call(server, `/api/v3/desktop/${rdpId}/viewer/file-rdpvpn`, { token: await as('advanced') });
    expect(res.status).toBe(200);
    const v = await res.json();
    expect(v).toMatchObject({ kind: 'file', protocol: 'rdpvpn', ext: 'rdp' });
    expect(v.content).toContain(`full address:s:${rdpIp}\r\n`);
    expect(v.content).toContain('username:s:alice\r\n');
    await server.ctx.engine.driver.waitForSerial(rdpId, /RDP-DESKTOP READY/, scaled(180_000));

    await pc.use((await config('advanced')).content);
    await until('the owner tunnel', async () => ((await pc.curl(`http://${guestIp}/`, 4)).code === 0 ? true : undefined), 60_000);
    const ok = await pc.rdpAuthOnly(v.content);
    expect(ok.code, ok.stderr.slice(-600)).toBe(0);

    await pc.use((await config('user')).content);
    const refused = await pc.rdpAuthOnly(v.content);
    expect(refused.code).not.toBe(0);
  }, scaled(400_000));

  it('a reset makes the old file stop working at once; the new one works', async () => {
    const old = await config('advanced');
    await pc.use(old.content);
    await until('the old file working', async () => (await pc.curl(`http://${guestIp}/`, 4)).code === 0, 60_000);
    expect((await call(server, '/api/v3/user/reset-vpn', { token: await as('advanced'), method: 'PUT' })).status).toBe(200);
    expect((await pc.curl(`http://${guestIp}/`, 5)).code).not.toBe(0);
    const fresh = await config('advanced');
    expect(fresh.content).not.toBe(old.content);
    await pc.use(fresh.content);
    expect(await until('the new file working', async () => ((await pc.curl(`http://${guestIp}/`, 4)).code === 0 ? true : undefined), 60_000)).toBe(true);
  }, scaled(180_000));

  it('keeps the tunnel and the bastion across a restart of the server', async () => {
    const pidBefore = readFileSync(`${server.config.dataDir}/vpn/wireguard-go.pid`, 'utf8');
    await server.restart();
    expect(server.app.vpn.available).toBe(true);
    expect(readFileSync(`${server.config.dataDir}/vpn/wireguard-go.pid`, 'utf8')).toBe(pidBefore); // adopted
    expect(await until('the tunnel after the restart', async () => ((await pc.curl(`http://${guestIp}/`, 4)).code === 0 ? true : undefined), 60_000)).toBe(true);
  }, scaled(180_000));

  it("reaches the guest's shell and web server through the bastion", async () => {
    await server.ctx.settings.set('bastion', { enabled: true });
    const key = sshKey();
    const res = await call(server, `/api/v3/desktop/bastion/${desktopId}`, {
      token: await as('advanced'),
      method: 'PUT',
      body: { ssh: { enabled: true, authorized_keys: key.publicKey }, http: { enabled: true } },
    });
    expect(res.status).toBe(200);
    const target = ZBastion.parse(await res.json());
    const { ssh: sshPort, http, https } = server.app.bastion.ports;
    const shell = await ssh({ key: key.file, port: sshPort!, user: target.id, command: 'cat /etc/hostname; id -un' });
    expect(shell.stderr).toBe('');
    expect(shell.stdout).toBe('demo-desktop\ndemo\n');
    expect((await ssh({ key: sshKey().file, port: sshPort!, user: target.id, command: 'true' })).code).toBe(255);

    const name = bastionHostName(target.id, DOMAIN);
    expect((await curlResolve({ scheme: 'http', name, port: http! })).stdout).toContain(page);
    const tls = await until('the guest HTTPS server (openssl s_server, key made at boot)', async () => {
      const r = await runClient('curl', ['-sS', '-k', '--max-time', '10', '--resolve', `${name}:${https}:127.0.0.1`, `https://${name}:${https}/index.html`]);
      return r.code === 0 ? r.stdout : undefined;
    }, scaled(60_000));
    expect(tls, 'the demo guest must serve HTTPS on 443: rebuild its cache from the current script').toContain(page);

    // stopped: refused
    for (let i = 0; i < 2; i++) await call(server, `/api/v3/desktop/stop/${desktopId}`, { token: await as('advanced') });
    await until('stopped', async () => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktopId)))[0]?.status === 'Stopped', 90_000);
    expect((await ssh({ key: key.file, port: sshPort!, user: target.id, command: 'true' })).code).toBe(255);
    expect((await curlResolve({ scheme: 'http', name, port: http! })).stdout).toBe('');
    // and the tunnel reaches nothing any more
    expect((await pc.curl(`http://${guestIp}/`, 4)).code).not.toBe(0);
  }, scaled(240_000));
});
