// The guests' private network with real guests: a desktop on the `wireguard` interface waits for
// its DHCP lease (WaitingIP), then is Started with its address, which the server reaches; a guest
// that never asks times out with a code; a restart keeps the network of running desktops; a host
// without the network refuses the interface and the RDP viewers.
import { scaled } from '../helpers/slowdown';
import { connect } from 'node:net';
import { existsSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { schema } from '../../src/db';
import { createEmpty } from '../../src/engine/disks';
import { parseCidr, overlaps } from '../../src/network/plan';
import { call, loginToken, startTestServer, testImagesDir, type TestServer } from '../helpers/server';
import { ensureRdpGuest } from '../../src/engine/guest-image';
import { RDP_TEMPLATE_ID, seedRdpTemplate } from '../../src/seed/rdp-template';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { guestNetworkMissing, testNetworkOptions } from '../helpers/guest-network';
import { describeIf } from '../helpers/can-run';
import { GuestNetwork } from '../../src/network/guest-network';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '../helpers/wait';

type Desktop = { id: string; name: string; state: string; ip: string | null; viewers: string[]; current_action: string | null };

const tcpOpen = (host: string, port: number, ms = 3000) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(ms, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });

const links = () => execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
const namespaces = () => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });

describeIf(guestNetworkMissing())('guest network with real guests', () => {
  let server: TestServer;
  let user: string;
  let template: string;

  beforeAll(async () => {
    server = await startTestServer({ network: true, startConcurrency: 1 });
    user = await loginToken(server, 'advanced');
    const [t] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
    template = t!.id;
  }, scaled(120_000));
  afterAll(async () => {
    const ns = server?.ctx.engine.network.namespace;
    await server?.close();
    if (ns) expect(namespaces()).not.toContain(ns);
  });

  const desktopsOf = async (): Promise<Desktop[]> => (await call(server, '/api/v3/user/desktops', { token: user })).json();
  const desktop = async (id: string) => (await desktopsOf()).find((d) => d.id === id);
  const waitState = (id: string, state: string, ms = 120_000) => until(`desktop ${id} ${state}`, async () => ((await desktop(id))?.state === state ? desktop(id) : undefined), ms);
  const create = async (name: string, interfaces: string[]) => {
    const r = await call(server, '/api/v3/persistent_desktop', { token: user, body: { template_id: template, name, hardware: { interfaces } } });
    expect(r.status).toBe(200);
    const id = ((await r.json()) as { id: string }).id;
    await waitState(id, 'Stopped', 30_000);
    return id;
  };

  it('offers the wireguard interface and the RDP viewers', async () => {
    const allowed = await (await call(server, '/api/v3/user/hardware/allowed', { token: user })).json();
    expect(allowed.interfaces.map((i: { id: string }) => i.id)).toEqual(['default', 'wireguard']);
    expect(allowed.viewers).toEqual(['browser_vnc', 'file_spice', 'browser_rdp', 'file_rdpgw', 'file_rdpvpn']);
  });

  let running: string;
  it('starts a desktop on the guest network: WaitingIP, then Started with an address the server reaches', async () => {
    // The demo guest: NAT first, the private NIC second (its DHCP runs in the background).
    running = await create('On the private network', ['default', 'wireguard']);
    const seen = new Set<string>();
    expect((await call(server, `/api/v3/desktop/start/${running}`, { token: user })).status).toBe(200);
    const started = await until('an address', async () => {
      const d = await desktop(running);
      if (d) seen.add(d.state);
      return d?.state === 'Started' ? d : undefined;
    }, scaled(120_000));
    expect(seen).toContain('WaitingIP');
    expect(started.ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(overlaps(parseCidr(`${started.ip}/32`)!, server.ctx.engine.network.plan!.subnet)).toBe(true);
    expect(started.current_action).toBeNull();
    // The demo guest's web server, from the server's own process (root namespace, through the veth).
    expect(await until('port 80 of the guest', () => tcpOpen(started.ip!, 80), 60_000)).toBe(true);
    // Its TAP is on the bridge inside the namespace, none is left in the root namespace.
    const tap = server.ctx.engine.network.tapName(running, 1);
    expect(await server.ctx.engine.network.exec('ip', ['-o', 'link', 'show', 'master', 'br0'])).toContain(tap);
    expect(links()).not.toContain(tap);
  }, scaled(180_000));

  it('keeps the network of a running desktop across a restart of the server', async () => {
    const before = (await desktop(running))!;
    await server.restart();
    user = await loginToken(server, 'advanced');
    const after = (await desktop(running))!;
    expect(after.state).toBe('Started');
    expect(after.ip).toBe(before.ip);
    expect(server.ctx.engine.network.available).toBe(true);
    expect(await until('port 80 after the restart', () => tcpOpen(after.ip!, 80), 30_000)).toBe(true);
  }, scaled(120_000));

  it('clears the address when stopped and removes the TAP', async () => {
    const tap = server.ctx.engine.network.tapName(running, 1);
    for (let i = 0; i < 2; i++) await call(server, `/api/v3/desktop/stop/${running}`, { token: user });
    const stopped = await waitState(running, 'Stopped', 60_000);
    expect(stopped!.ip).toBeNull();
    await until('the TAP gone', async () => !(await server.ctx.engine.network.exec('ip', ['-o', 'link', 'show'])).includes(tap), 10_000);
  }, scaled(90_000));

  const hasFreerdp = (() => {
    try {
      execFileSync('sh', ['-c', 'command -v xfreerdp && command -v xvfb-run'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  it('boots the "Debian desktop (RDP)" template: xrdp on its address, signed in with the desktop\'s guest credentials', async () => {
    await seedRdpTemplate(server.ctx.db, server.ctx.engine, await ensureRdpGuest(testImagesDir()));
    const password = `pw ${randomBytes(6).toString('hex')}`;
    const r = await call(server, '/api/v3/persistent_desktop', {
      token: user,
      body: { template_id: RDP_TEMPLATE_ID, name: 'Remote desktop', guest_properties: { credentials: { username: 'alice', password } } },
    });
    expect(r.status).toBe(200);
    const id = ((await r.json()) as { id: string }).id;
    await waitState(id, 'Stopped', 30_000);
    expect((await call(server, `/api/v3/desktop/start/${id}`, { token: user })).status).toBe(200);
    const d = (await waitState(id, 'Started', 180_000))!;
    expect(d.ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(d.viewers).toEqual(expect.arrayContaining(['browser-rdp', 'file-rdpgw']));
    await server.ctx.engine.driver.waitForSerial(id, /RDP-DESKTOP READY/, scaled(120_000));
    expect(await tcpOpen(d.ip!, 3389)).toBe(true);
    if (hasFreerdp) {
      // A real RDP client signs in with the desktop's credentials: the guest reports the session on its serial console.
      const client = spawn('xvfb-run', ['-a', 'xfreerdp', `/v:${d.ip}`, '/u:alice', `/p:${password}`, '/cert:ignore', '/size:800x600'], { stdio: 'ignore', detached: true });
      try {
        await server.ctx.engine.driver.waitForSerial(id, /RDP-SESSION started user=alice/, scaled(90_000));
      } finally {
        // xfreerdp ended, xvfb-run ends its Xvfb and removes its own temporary directory; a group kill left the directory.
        const exited = new Promise((r) => (client.exitCode !== null ? r(null) : client.once('exit', r)));
        spawnSync('pkill', ['-TERM', '-P', String(client.pid), 'xfreerdp']);
        if ((await Promise.race([exited, new Promise((r) => setTimeout(() => r('late'), scaled(10_000)))])) === 'late') {
          try {
            process.kill(-client.pid!, 'SIGKILL');
          } catch {
            // gone
          }
        }
      }
    }
    for (let i = 0; i < 2; i++) await call(server, `/api/v3/desktop/stop/${id}`, { token: user });
    await waitState(id, 'Stopped', 60_000);
  }, scaled(420_000));

  it('leaves WaitingIP after the timeout with a code when the guest never asks for an address', async () => {
    const id = await create('Never asks', ['wireguard']);
    // A blank disk: nothing boots, nothing asks for a lease.
    const [disk] = await server.ctx.db
      .select({ path: schema.storage.path })
      .from(schema.domainDisks)
      .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId))
      .where(eq(schema.domainDisks.domainId, id));
    rmSync(disk!.path);
    await createEmpty(disk!.path, 64 * 1024 * 1024);
    expect(existsSync(disk!.path)).toBe(true);
    const timeout = server.ctx.config.guestIpTimeoutSeconds;
    server.ctx.config.guestIpTimeoutSeconds = 3;
    try {
      expect((await call(server, `/api/v3/desktop/start/${id}`, { token: user })).status).toBe(200);
      await waitState(id, 'WaitingIP', 60_000);
      const d = await waitState(id, 'Started', 30_000);
      expect(d!.ip).toBeNull();
      expect(d!.current_action).toBe('guest_ip_timeout');
    } finally {
      server.ctx.config.guestIpTimeoutSeconds = timeout;
    }
    for (let i = 0; i < 2; i++) await call(server, `/api/v3/desktop/stop/${id}`, { token: user });
    await waitState(id, 'Stopped', 60_000);
  }, scaled(120_000));
});

describeIf(guestNetworkMissing())('the guest network of a run that crashed', () => {
  it('is cleaned and made again at the next start of the same data directory; a range in use is refused', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'guest-net-'));
    const opts = { ...testNetworkOptions(), dataDir, stateDir: join(dataDir, 'network') };
    const first = await GuestNetwork.open(opts);
    const other = await GuestNetwork.open({ ...testNetworkOptions(), cidr: opts.cidr, dataDir: join(dataDir, 'other'), stateDir: join(dataDir, 'other', 'network') });
    try {
      expect(first.available).toBe(true);
      // Another server's range overlaps a route that exists now: that one goes without.
      expect(other.available).toBe(false);
      expect(other.reason).toMatch(/overlaps/);
      // No close: as after a kill -9. A TAP of a machine that is gone is left too.
      await first.createTap(first.tapName('gone', 0));
      const again = await GuestNetwork.open(opts);
      expect(again.available).toBe(true);
      expect(again.reason).toBeNull();
      expect(links()).not.toContain(first.tapName('gone', 0));
      expect((await again.exec('ip', ['-o', 'link', 'show'])).includes(first.tapName('gone', 0))).toBe(false);
      // One dnsmasq in the namespace, the new one.
      const pids = execFileSync('ip', ['netns', 'pids', opts.namespace!], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
      expect(pids).toHaveLength(1);
      await again.close({ teardown: true });
      expect(namespaces()).not.toContain(opts.namespace);
      expect(links()).not.toContain(`${opts.linkPrefix}h`);
    } finally {
      await first.close({ teardown: true });
      await other.close({ teardown: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, scaled(60_000));
});

describeIf(guestNetworkMissing())('a TAP left by a machine that died', () => {
  it('does not stop the next TAP of that name: in this host\'s namespace, or moved into the network\'s', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'guest-tap-'));
    const net = await GuestNetwork.open({ ...testNetworkOptions(), dataDir, stateDir: join(dataDir, 'network') });
    const name = net.tapName('left', 0);
    const inNamespace = async () => (await net.exec('ip', ['-o', 'link', 'show'])).split('\n').filter((l) => l.includes(`${name}:`) || l.includes(`${name}@`));
    try {
      expect(net.available).toBe(true);
      // Left in this host's namespace (made, never moved): made again and moved.
      await net.createTap(name);
      await net.createTap(name);
      await net.attachTap(name);
      expect(links()).not.toContain(`${name}:`);
      expect((await inNamespace()).join('\n')).toContain('master');
      // Left in the network's namespace: the new one takes its place there.
      await net.createTap(name);
      expect(links()).toContain(`${name}:`);
      await net.attachTap(name);
      expect(links()).not.toContain(`${name}:`);
      expect(await inNamespace()).toHaveLength(1);
      // Moved already: attached again, nothing to move.
      await net.attachTap(name);
      expect((await inNamespace()).join('\n')).toContain('master');
      await net.deleteTap(name);
      expect(await inNamespace()).toHaveLength(0);
    } finally {
      await net.close({ teardown: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, scaled(60_000));
});

describe('a server without the guest network', () => {
  let server: TestServer;
  let user: string;
  let template: string;
  beforeAll(async () => {
    server = await startTestServer();
    user = await loginToken(server, 'advanced');
    const [t] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
    template = t!.id;
  }, scaled(120_000));
  afterAll(async () => server?.close());

  const code = async (r: Response) => ({ status: r.status, code: ((await r.json()) as { description_code: string }).description_code });

  it('offers neither the wireguard interface nor the RDP viewers', async () => {
    expect(server.ctx.engine.network.available).toBe(false);
    const allowed = await (await call(server, '/api/v3/user/hardware/allowed', { token: user })).json();
    expect(allowed.interfaces.map((i: { id: string }) => i.id)).toEqual(['default']);
    expect(allowed.viewers).toEqual(['browser_vnc', 'file_spice']);
  });

  it('refuses them when chosen, with a code', async () => {
    const create = (body: Record<string, unknown>) => call(server, '/api/v3/persistent_desktop', { token: user, body: { template_id: template, ...body } });
    expect(await code(await create({ name: 'Private one', hardware: { interfaces: ['default', 'wireguard'] } }))).toEqual({ status: 428, code: 'guest_network_unavailable' });
    expect(await code(await create({ name: 'Remote one', guest_properties: { viewers: { browser_vnc: {}, browser_rdp: {} } } }))).toEqual({ status: 428, code: 'guest_network_unavailable' });
  });

  it('refuses to start a desktop that has the interface, and its RDP viewers', async () => {
    const [d] = (await (await call(server, '/api/v3/user/desktops', { token: user })).json()) as Desktop[];
    const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, d!.id));
    // As if made on a server that had the network.
    await server.ctx.db
      .update(schema.domains)
      .set({
        hardware: { ...row!.hardware, interfaces: [...row!.hardware.interfaces, { id: 'wireguard', mac: '52:54:00:12:34:56' }] },
        guestProperties: { ...row!.guestProperties, viewers: { ...row!.guestProperties.viewers, browser_rdp: { options: null } } },
      })
      .where(eq(schema.domains.id, d!.id));
    expect(await code(await call(server, `/api/v3/desktop/start/${d!.id}`, { token: user }))).toEqual({ status: 428, code: 'guest_network_unavailable' });
    await server.ctx.db.update(schema.domains).set({ status: 'Started' }).where(eq(schema.domains.id, d!.id));
    expect(await code(await call(server, `/api/v3/desktop/${d!.id}/viewer/browser-rdp`, { token: user }))).toEqual({ status: 428, code: 'guest_network_unavailable' });
    await server.ctx.db.update(schema.domains).set({ status: 'Stopped', hardware: row!.hardware, guestProperties: row!.guestProperties }).where(eq(schema.domains.id, d!.id));
  });
});
