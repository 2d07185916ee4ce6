// The guest network across hosts: the server's guest network reaches two lab hypervisors (each
// prepared by README's recipe: a `vdi-guests` bridge with a VXLAN port to the server) by its VXLAN
// device. The "Debian desktop (RDP)" guest placed on a lab host gets its lease from the server's
// DHCP (WaitingIP → Started with its address), and xfreerdp opens a session of the user of its guest
// credentials (handed over by libvirt's fw_cfg entry) through the portal's RD Gateway; then, on the
// same running desktop, the other doors: Chromium on /rdp through the RDCleanPath proxy (a typed line
// starts the guest's web servers), xfreerdp over the user VPN (wireguard-go on a user computer with the
// portal's file) and the bastion's HTTP and HTTPS routes (the RDP guest runs no SSH server).
// Placement does not put such a desktop on a host without the bridge; a removed host leaves the tunnel. One lab for the file.
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bastionHostName, ZBastion, ZVpnConfig } from '@vdi/contracts';
import { schema } from '../../src/db';
import { ensureRdpGuest } from '../../src/engine/guest-image';
import { parseIpv4 } from '../../src/network/plan';
import { GUEST_BRIDGE } from '../../src/network/tunnel';
import { RDP_TEMPLATE_ID, seedRdpTemplate } from '../../src/seed/rdp-template';
import { describeIf, firstMissing, missingFile } from '../helpers/can-run';
import { curlResolve } from '../helpers/bastion-clients';
import { freeGuestSubnet, guestNetworkMissing, testNetworkOptions } from '../helpers/guest-network';
import { addLabHosts, labProgramsMissing, labTag, startServerLab, startsOnLabOnly, virshOn, type TestLab } from '../helpers/lab';
import { browserRdp, countPixels, typeInSession, xfreerdpScreen } from '../helpers/rdp-clients';
import { call, loginToken, startTestServer, testImagesDir, type TestServer } from '../helpers/server';
import { scaled } from '../helpers/slowdown';
import { until } from '../helpers/wait';
import { userComputer, vpnBastionEnv, type UserComputer } from '../helpers/vpn-client';

const root = join(import.meta.dirname, '..', '..', '..');
const webDist = join(root, 'web', 'dist');
const shots = join(root, 'artifacts', 'screenshots');
const DOMAIN = 'bastion.test';

const missing = firstMissing(
  guestNetworkMissing(),
  labProgramsMissing('bridge', 'xfreerdp', 'xvfb-run', 'wireguard-go', 'wg', 'nft', 'curl'),
  missingFile(join(testImagesDir(), 'vmlinuz'), "the demo guest's kernel"),
  missingFile(join(webDist, 'index.html'), 'the web build'),
);

const A = '/api/v3/admin';

const tcpOpen = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host, port, timeout: 2000 });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.once('timeout', () => done(false));
  });

describeIf(missing)('the guest network across hosts (VXLAN to lab hypervisors)', () => {
  let server: TestServer;
  let lab: TestLab;
  let work: string;
  let admin: string;
  let user: string;
  let pc: UserComputer;
  /** the RDP desktop running on the first lab host, and its address */
  let rdpId = '';
  let rdpIp = '';
  const tag = labTag('nt');
  const vni = randomInt(100_000, 0xffffff);
  const hostIds: string[] = [];
  const password = `pw ${randomBytes(6).toString('hex')}`;

  const send = async (token: string, path: string, opts: { method?: string; body?: unknown } = {}) => {
    const res = await call(server, path, { token, ...opts });
    return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> };
  };
  const onHost = (i: number) => virshOn(lab.hosts[i]!, 'list', '--all', '--name');
  const row = async (id: string) => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0]!;
  const setHost = async (i: number, enabled: boolean) => expect((await send(admin, `${A}/hypervisors/${hostIds[i]}`, { method: 'PUT', body: { enabled } })).status).toBe(200);
  const createRdpDesktop = async (name: string) => {
    const r = await send(user, '/api/v3/persistent_desktop', { body: { template_id: RDP_TEMPLATE_ID, name, guest_properties: { credentials: { username: 'alice', password } } } });
    expect(r.status).toBe(200);
    const id = String(r.body.id);
    await until(`${name} made`, async () => (await row(id)).status === 'Stopped', 30_000);
    return id;
  };

  beforeAll(async () => {
    work = mkdtempSync('/tmp/i25net-work-');
    pc = await userComputer(freeGuestSubnet());
    server = await startTestServer({
      network: { ...testNetworkOptions(), tunnel: { vni } },
      startConcurrency: 1,
      env: { ...(await vpnBastionEnv(pc, freeGuestSubnet(), DOMAIN)), WEB_DIST: webDist },
    });
    lab = await startServerLab(server, { folder: 'i25net-lab', subnet: '10.236.1.0/24', hosts: 2, tag, sharedStorage: true, guestNetworkVni: vni });
    await seedRdpTemplate(server.ctx.db, server.ctx.engine, await ensureRdpGuest(testImagesDir()));
    [admin, user] = [await loginToken(server, 'admin'), await loginToken(server, 'advanced')];
    hostIds.push(...(await addLabHosts(server, admin, lab.hosts)).map((h) => h.id));
    await startsOnLabOnly(server, admin);
  }, scaled(120_000));

  afterAll(async () => {
    await pc?.close();
    await server?.close();
    await lab?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('floods the guest network to every connected host', async () => {
    expect((await server.ctx.engine.network.tunnelPeers()).sort()).toEqual(lab.hosts.map((h) => h.address).sort());
  });

  it('placement skips a host without the guest bridge for such a desktop: none left, the refusal says why', async () => {
    execFileSync('ip', ['-n', `vdilab-${tag}-2`, 'link', 'del', GUEST_BRIDGE]);
    // The directory reads a host's numbers every few seconds (its heartbeat): it sees the bridge gone.
    await until('the host seen without the bridge', async () => (await server.ctx.engine.hosts.status(hostIds[1]!))?.guestNetwork === false, 30_000);
    await setHost(0, false);
    const id = await createRdpDesktop('Not on a bridge');
    const refused = await send(user, `/api/v3/desktop/start/${id}`);
    expect(refused).toMatchObject({ status: 428, body: { description_code: 'hypervisors_not_available', params: { reason: 'guest_network_unreachable' } } });
    expect((await row(id)).status).toBe('Stopped');
    expect(onHost(1)).not.toContain(id);
    await setHost(0, true);
    await setHost(1, false);
  }, scaled(60_000));

  it('an RDP desktop on a lab host: its lease from the server, its user from fw_cfg, its session through the RD Gateway', async () => {
    const id = (rdpId = await createRdpDesktop('Across the tunnel'));
    const started = Date.now();
    expect((await send(user, `/api/v3/desktop/start/${id}`)).status).toBe(200);
    const ip = await until('Started with an address', async () => {
      const r = await row(id);
      return r.status === 'Started' && r.guestIp ? r.guestIp : undefined;
    }, 120_000);
    rdpIp = ip;
    console.log(`address after ${Date.now() - started} ms`);
    expect((await row(id)).hypervisorId).toBe(hostIds[0]);
    expect(onHost(0)).toContain(id);
    const plan = server.ctx.engine.network.plan!;
    expect(parseIpv4(ip)! - plan.subnet.address).toBeGreaterThan(2); // in the server's range, not .1/.2
    expect(parseIpv4(ip)! >>> (32 - plan.subnet.prefix)).toBe(plan.subnet.address >>> (32 - plan.subnet.prefix));
    // The server reaches the guest's RDP server across the tunnel (xrdp starts last in its boot).
    await until('the guest\'s RDP port', () => tcpOpen(ip, 3389), 90_000);
    console.log(`RDP port open after ${Date.now() - started} ms`);

    const res = await send(user, `/api/v3/desktop/${id}/viewer/file-rdpgw`);
    expect(res.status).toBe(200);
    const content = String(res.body.content);
    expect(content).toContain(`full address:s:${ip}\r\n`);
    const file = join(work, 'desktop.rdp');
    writeFileSync(file, content, { mode: 0o600 });
    // A full session (its terminal's white on most of the screen; xrdp's login dialog is grey and blue):
    // the guest made the user of the credentials libvirt handed over, and full-size packets crossed the tunnel.
    // Its port opens before xrdp takes sessions (the remote guest's serial READY marker cannot be read here):
    // while the gateway answers that it could not reach the guest, the client tries again.
    const deadline = Date.now() + scaled(90_000);
    let shot = await xfreerdpScreen(file, { work, waitMs: 60_000, drawn: (rgb) => countPixels(rgb, (r, g, b) => r > 240 && g > 240 && b > 240) > 150_000 });
    while (!shot.drawn && shot.log.includes('E_PROXY_TS_CONNECTFAILED') && Date.now() < deadline) {
      await until('the guest accepting RDP again', () => tcpOpen(ip, 3389), 30_000);
      // The file's gateway token was spent by the try: a person downloads the file again.
      const again = await send(user, `/api/v3/desktop/${id}/viewer/file-rdpgw`);
      expect(again.status).toBe(200);
      writeFileSync(file, String(again.body.content), { mode: 0o600 });
      shot = await xfreerdpScreen(file, { work, waitMs: 60_000, drawn: (rgb) => countPixels(rgb, (r, g, b) => r > 240 && g > 240 && b > 240) > 150_000 });
    }
    expect(shot.drawn, shot.log).toBe(true);
    console.log(`session drawn after ${Date.now() - started} ms`);
  }, scaled(240_000));

  it('browser RDP through the RDCleanPath proxy: Chromium on /rdp shows the remote session, and a typed line runs there', async () => {
    const started = Date.now();
    const viewer = await send(user, `/api/v3/desktop/${rdpId}/viewer/browser-rdp`);
    expect(viewer.status).toBe(200);
    const browser = await browserRdp(server.url, user);
    mkdirSync(shots, { recursive: true });
    try {
      const page = await browser.open(String(viewer.body.urlp));
      console.log(`browser session drawn after ${Date.now() - started} ms`);
      // What the VPN and the bastion reach next, started as the session's user: busybox's httpd on
      // 8080 (serving /etc) and openssl's test server on 8443 (its status page, a key made now).
      await typeInSession(page, 'httpd -p 8080 -h /etc');
      await until('the typed line run in the guest', () => tcpOpen(rdpIp, 8080), 30_000);
      await typeInSession(page, 'openssl req -x509 -newkey ed25519 -nodes -batch -keyout /tmp/k -out /tmp/c && openssl s_server -quiet -accept 8443 -cert /tmp/c -key /tmp/k -www');
      await until('the second server', () => tcpOpen(rdpIp, 8443), 30_000).finally(() => page.screenshot({ path: join(shots, 'cluster-rdp-browser.png') }));
      console.log(`typed line run after ${Date.now() - started} ms`);
    } finally {
      await browser.close();
    }
  }, scaled(180_000));

  it("RDP over the user VPN: the owner's tunnel (wireguard-go with the portal's file) opens the remote desktop", async () => {
    const started = Date.now();
    const config = await send(user, '/api/v3/user/vpn/config');
    expect(config.status).toBe(200);
    await pc.use(ZVpnConfig.parse(config.body).content);
    expect(await until('the guest through the tunnel', async () => {
      const r = await pc.curl(`http://${rdpIp}:8080/hostname`, 4);
      return r.code === 0 ? r.stdout : undefined;
    }, 60_000)).toBe('rdp-desktop\n');
    const file = await send(user, `/api/v3/desktop/${rdpId}/viewer/file-rdpvpn`);
    expect(file.status).toBe(200);
    expect(String(file.body.content)).toContain(`full address:s:${rdpIp}\r\n`);
    const auth = await pc.rdpAuthOnly(String(file.body.content));
    expect(auth.code, auth.stderr.slice(-600)).toBe(0);
    console.log(`RDP over the VPN after ${Date.now() - started} ms`);
  }, scaled(120_000));

  it("the bastion's HTTP and HTTPS routes reach the remote desktop's web servers", async () => {
    await server.ctx.settings.set('bastion', { enabled: true });
    const res = await send(user, `/api/v3/desktop/bastion/${rdpId}`, { method: 'PUT', body: { http: { enabled: true, http_port: 8080, https_port: 8443 } } });
    expect(res.status).toBe(200);
    const name = bastionHostName(ZBastion.parse(res.body).id, DOMAIN);
    const { http, https } = server.app.bastion.ports;
    expect((await curlResolve({ scheme: 'http', name, port: http!, path: '/hostname' })).stdout).toBe('rdp-desktop\n');
    expect((await curlResolve({ scheme: 'https', name, port: https! })).stdout).toContain('Ciphers supported in s_server binary');
  }, scaled(60_000));

  it('a removed host leaves the tunnel', async () => {
    expect((await send(admin, `${A}/hypervisors/${hostIds[1]}`, { method: 'DELETE' })).status).toBe(204);
    expect(await server.ctx.engine.network.tunnelPeers()).toEqual([lab.hosts[0]!.address]);
  });

  it("the server's stop ends the guest network once no guest runs anywhere, though a host is still connected (its tunnel is no guest)", async () => {
    const ns = server.ctx.engine.network.namespace;
    // A mark in the network's namespace: it stays only if the namespace does.
    execFileSync('ip', ['-n', ns, 'link', 'add', 'vdimark', 'type', 'bridge']);
    if (rdpId) {
      for (let i = 0; i < 2 && (await row(rdpId)).status !== 'Stopped'; i++) await send(user, `/api/v3/desktop/stop/${rdpId}`);
      await until('the remote desktop stopped', async () => (await row(rdpId)).status === 'Stopped', 60_000);
    }
    expect(await server.ctx.engine.network.tunnelPeers()).toContain(lab.hosts[0]!.address);
    await server.restart();
    expect(execFileSync('ip', ['-n', ns, '-o', 'link', 'show'], { encoding: 'utf8' })).not.toContain('vdimark');
  }, scaled(120_000));
});
