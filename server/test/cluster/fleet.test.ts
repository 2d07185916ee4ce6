// The engine runs desktops on many hosts: an admin adds three lab hypervisors (each its own network
// namespace, libvirtd and sshd; two reached by qemu+ssh, one by qemu+tls with the certificate the
// console issued) through the API with their host keys or certificate confirmed, stops new starts on
// the server's own host, and a user's desktops then run on the lab hosts — placed, reached by the
// browser VNC path and the SPICE proxy, stopped, adopted (not run twice) by a restarted server, and
// started elsewhere when their host fails. One lab for the whole file; the hosts share the
// installation's storage folder as their `default` pool.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ZAdminDesktopList, ZAdminHypervisor, ZAdminHypervisorHostKey, ZAdminHypervisorList, ZAdminHypervisorTlsBundle } from '@vdi/contracts';
import { schema } from '../../src/db';
import { fingerprintOf } from '../../src/engine/libvirt/hosts';
import { describeIf, firstMissing, missingFile, missingNetAdmin } from '../helpers/can-run';
import { labProgramsMissing, labTag, startServerLab, startsOnLabOnly, virshOn, type TestLab } from '../helpers/lab';
import { call, loginToken, startTestServer, testImagesDir, type TestServer } from '../helpers/server';
import { scaled } from '../helpers/slowdown';
import { openViewerSession, vncTicket } from '../helpers/viewer-session';
import { until } from '../helpers/wait';

const missing = firstMissing(
  missingNetAdmin(),
  labProgramsMissing(),
  missingFile(join(testImagesDir(), 'vmlinuz'), "the demo guest's kernel"),
);

const A = '/api/v3/admin';

describeIf(missing)('the fleet: desktops placed and run on lab hypervisors', () => {
  let server: TestServer;
  let lab: TestLab;
  let admin: string;
  let user: string;
  /** the TLS host's certificate, as issued */
  let tlsCertificate = '';
  const tag = labTag('fl');
  const hostIds: string[] = [];
  /** the desktops started on the lab (id → hypervisor id) */
  const placed = new Map<string, string>();

  const send = async (token: string, path: string, opts: { method?: string; body?: unknown } = {}) => {
    const res = await call(server, path, { token, ...opts });
    return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> };
  };
  /** The domains a lab host's libvirtd runs (asked on its own socket, not through the server). */
  const onHost = (i: number) => virshOn(lab.hosts[i]!, 'list', '--name');
  /** the lab hosts but the i-th */
  const others = (i: number) => lab.hosts.map((_, j) => j).filter((j) => j !== i);
  const stateOf = async (id: string) => {
    const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id));
    return row!;
  };

  beforeAll(async () => {
    server = await startTestServer({ startConcurrency: 2 });
    admin = await loginToken(server, 'admin');
    lab = await startServerLab(server, {
      folder: 'fleet-lab',
      subnet: '10.234.1.0/24',
      hosts: 3,
      tag,
      // The installation's storage folder at the same path on every host (as an NFS mount would be).
      sharedStorage: true,
      // The last host is reached by qemu+tls: its libvirtd has the certificate the console issues for it.
      tls: async (h) => {
        if (!h.name.endsWith('-host3')) return null;
        const r = await send(admin, `${A}/hypervisors/tls-certificate`, { body: { host: h.address } });
        expect(r.status).toBe(200);
        const b = ZAdminHypervisorTlsBundle.parse(r.body);
        expect(new X509Certificate(b.server_certificate).checkIP(h.address)).toBe(h.address);
        tlsCertificate = b.server_certificate;
        return { caCert: b.ca_certificate, cert: b.server_certificate, key: b.server_key };
      },
    });
    user = await loginToken(server, 'user');
  }, scaled(120_000));

  afterAll(async () => {
    await server?.close();
    await lab?.close();
  });

  it('adds three hypervisors (two by qemu+ssh, one by qemu+tls): the host key or certificate shown first, a wrong one refused, the confirmed one connected live', async () => {
    for (const h of lab.hosts) {
      const uri = h.tlsUri ?? h.uri;
      const first = await send(admin, `${A}/hypervisors`, { body: { uri } });
      expect(first.status).toBe(200);
      const key = ZAdminHypervisorHostKey.parse(first.body);
      if (h.tlsUri) expect(key).toMatchObject({ algorithm: 'x509', fingerprint: `SHA256:${new X509Certificate(tlsCertificate).fingerprint256}` });
      else expect(key).toMatchObject({ algorithm: 'ssh-ed25519', fingerprint: fingerprintOf(h.hostKey.split(' ')[1]!) });
      if (hostIds.length === 0) {
        const wrong = await send(admin, `${A}/hypervisors`, { body: { uri: h.uri, host_key_fingerprint: fingerprintOf(lab.hosts[1]!.hostKey.split(' ')[1]!) } });
        expect(wrong).toMatchObject({ status: 409, body: { description_code: 'hypervisor_host_key_changed' } });
      }
      const added = await send(admin, `${A}/hypervisors`, { body: { uri, name: h.name, host_key_fingerprint: key.fingerprint } });
      expect(added.status).toBe(201);
      const view = ZAdminHypervisor.parse(added.body);
      expect(view).toMatchObject({ name: h.name, state: 'Online', last_error: null, desktops_running: 0 });
      expect(view.cpus).toBeGreaterThan(0);
      expect(view.pools.map((p) => p.name).sort()).toEqual(['default', 'local']);
      expect(view.pools.find((p) => p.name === 'default')).toMatchObject({ path: join(server.config.dataDir, 'storage') });
      hostIds.push(view.id);
    }
    // The server's own host takes no new starts: they go to the lab.
    await startsOnLabOnly(server, admin);
  }, scaled(60_000));

  it('starts desktops on the lab hosts: placed, recorded, named in the admin view, reached by VNC and SPICE', async () => {
    const mine = (await send(user, '/api/v3/user/desktops')).body as unknown as { id: string; name: string }[];
    const wanted = mine.filter((d) => d.name !== 'GPU desktop').slice(0, 2);
    for (const d of wanted) {
      const r = await send(user, `/api/v3/desktop/start/${d.id}`);
      if (r.status !== 200) break; // the user's running quota: one is enough to go on
      const row = await until(`${d.name} started`, async () => {
        const s = await stateOf(d.id);
        return s.status === 'Started' && s;
      }, 60_000);
      expect(hostIds).toContain(row.hypervisorId);
      placed.set(d.id, row.hypervisorId!);
    }
    expect(placed.size).toBeGreaterThan(0);
    console.log(`placed ${placed.size} desktop(s): ${[...placed.values()].map((h) => lab.hosts[hostIds.indexOf(h)]!.name).join(', ')}`);
    // The console's host view says what the desktops running on each host were given (it said 0 for remote hosts).
    const views = ZAdminHypervisorList.parse((await send(admin, `${A}/hypervisors`)).body).items;
    for (const host of new Set(placed.values())) {
      expect(views.find((v) => v.id === host)!.desktops_vcpus).toBeGreaterThan(0);
      expect(views.find((v) => v.id === host)!.desktops_memory_mb).toBeGreaterThan(0);
      // Its CPU's busy share, from libvirt's node CPU stats between two heartbeats (it said 0 for remote hosts).
      const cpu = await until(`${host}'s CPU load`, async () => {
        const v = ZAdminHypervisorList.parse((await send(admin, `${A}/hypervisors`)).body).items.find((x) => x.id === host)!;
        return v.cpu_used_percent > 0 && v.cpu_used_percent;
      }, 30_000);
      expect(cpu).toBeLessThanOrEqual(100);
    }
    for (const [id, host] of placed) {
      const i = hostIds.indexOf(host);
      expect(onHost(i)).toContain(id);
      for (const j of others(i)) expect(onHost(j)).not.toContain(id);
      const runtime = (await server.ctx.engine.driver.list()).find((m) => m.id === id);
      expect(runtime).toMatchObject({ host, vnc: { host: lab.hosts[i]!.address } });

      const admins = ZAdminDesktopList.parse((await send(admin, `${A}/desktops?search=&state=Started`)).body);
      expect(admins.items.find((x) => x.id === id)).toMatchObject({ hypervisor: lab.hosts[i]!.name });
      // The owner's card names it too (by name, never by URI).
      const cards = (await send(user, '/api/v3/user/desktops')).body as unknown as { id: string; hypervisor: string | null }[];
      expect(cards.find((x) => x.id === id)?.hypervisor).toBe(lab.hosts[i]!.name);

      // Browser VNC through the server's websocket, with the ticket's one-time password.
      const session = await openViewerSession(server.url, await vncTicket(server, user, id), { auth: true });
      expect(session).toMatchObject({ banner: 'RFB 003.008\n', authOk: true });
      const png = await server.ctx.engine.driver.screenshot(id);
      expect(png.subarray(1, 4).toString()).toBe('PNG');

      // SPICE: the .vv names the host's graphics endpoint, and the portal's CONNECT proxy reaches it.
      const spice = await send(user, `/api/v3/desktop/${id}/viewer/file-spice`);
      const content = String(spice.body.content);
      expect(content).toContain(`host=${lab.hosts[i]!.address}\n`);
      const port = /\nport=(\d+)\n/.exec(content)![1];
      const proxy = new URL(/proxy=(\S+)/.exec(content)![1]!);
      const answer = await new Promise<string>((resolve, reject) => {
        const s = connect(Number(proxy.port), proxy.hostname, () => s.write(`CONNECT ${lab.hosts[i]!.address}:${port} HTTP/1.1\r\nHost: ${lab.hosts[i]!.address}:${port}\r\n\r\n`));
        s.once('data', (b) => {
          resolve(b.toString('latin1'));
          s.destroy();
        });
        s.once('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.[01] 200/);
    }
  }, scaled(150_000));

  it('a restarted server adopts the remote domains: still Started, nothing runs twice', async () => {
    await server.restart();
    // The stored hosts connect in the background; their desktops are reconciled when they are online.
    await until('the lab hosts reconnected', async () => {
      const machines = await server.ctx.engine.driver.list();
      return [...placed.keys()].every((id) => machines.some((m) => m.id === id && m.host === placed.get(id)));
    }, 60_000);
    for (const [id, host] of placed) {
      expect((await stateOf(id)).status).toBe('Started');
      expect(onHost(hostIds.indexOf(host)).filter((n) => n === id)).toHaveLength(1);
      for (const j of others(hostIds.indexOf(host))) expect(onHost(j)).not.toContain(id);
    }
    user = await loginToken(server, 'user');
  }, scaled(90_000));

  it('stops them: the domains leave their hosts and the desktops are Stopped', async () => {
    for (const [id, host] of placed) {
      expect((await send(user, `/api/v3/desktop/stop/${id}`)).status).toBe(200);
      // The demo guest powers off on ACPI; the second stop forces it if it takes too long.
      await until(`${id} stopped`, async () => (await stateOf(id)).status === 'Stopped', 20_000).catch(async () => {
        await send(user, `/api/v3/desktop/stop/${id}`);
        await until(`${id} force-stopped`, async () => (await stateOf(id)).status === 'Stopped', 30_000);
      });
      expect(onHost(hostIds.indexOf(host))).not.toContain(id);
      expect((await stateOf(id)).hypervisorId).toBeNull();
    }
  }, scaled(120_000));

  it('a host that fails: offline with the reason and its desktop Unknown to its owner within 30 s; marked down, its desktop starts elsewhere; back, what still ran there is destroyed', async () => {
    const last = lab.hosts.length - 1;
    const ns = `vdilab-${tag}-${last + 1}`;
    const pidsOf = (comm: string) =>
      execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .filter((p) => {
          try {
            return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === comm;
          } catch {
            return false;
          }
        });
    /** the lost host's QEMU processes running desktop `id` (its libvirtd may be dead) */
    const guestsOf = (id: string) => pidsOf('qemu-system-x86').filter((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(id));
    const view = async () => ZAdminHypervisorList.parse((await send(admin, `${A}/hypervisors`)).body).items.find((h) => h.id === hostIds[last]);
    const card = async (id: string) => ((await send(user, '/api/v3/user/desktops')).body as unknown as { id: string; state: string }[]).find((x) => x.id === id);
    const setStarts = async (i: number, enabled: boolean) => expect((await send(admin, `${A}/hypervisors/${hostIds[i]}`, { method: 'PUT', body: { enabled } })).status).toBe(200);
    const [id] = [...placed.keys()];
    const startOnLast = async () => {
      for (const i of others(last)) await setStarts(i, false);
      expect((await send(user, `/api/v3/desktop/start/${id}`)).status).toBe(200);
      await until('started on the last host', async () => (await stateOf(id!)).status === 'Started', 60_000);
      expect((await stateOf(id!)).hypervisorId).toBe(hostIds[last]);
      for (const i of others(last)) await setStarts(i, true);
    };
    const kill = (...comms: string[]) => {
      for (const comm of comms) for (const p of pidsOf(comm)) process.kill(Number(p), 'SIGKILL');
    };
    // The host's link on the lab's bridge (named as lab.ts names it).
    const link = (state: 'up' | 'down') => execFileSync('ip', ['link', 'set', `vdilab${tag}v${last + 1}`, state]);
    const loseLast = async (what: string, lose: () => void) => {
      const killedAt = Date.now();
      lose();
      let seen = '';
      const down = await until('the host offline and its desktop Unknown to its owner', async () => {
        const [h, c] = [await view(), await card(id!)];
        seen = `host ${h?.state}, desktop ${c?.state}`;
        return h?.state === 'Offline' && h.desktops_unknown === 1 && c?.state === 'Unknown' && h;
      }, 30_000).catch((err: Error) => {
        throw new Error(`${err.message} (last seen: ${seen})`);
      });
      console.log(`${what}: offline and Unknown after ${Date.now() - killedAt} ms`);
      expect(down.last_error).toBeTruthy();
      expect(down.last_error).not.toContain(join(server.config.dataDir, 'ssh'));
      // Unknown offers nothing: no start until the host is back or marked down.
      expect((await send(user, `/api/v3/desktop/start/${id}`)).status).toBe(409);
      const released = await send(admin, `${A}/hypervisors/${hostIds[last]}/down`, { method: 'POST' });
      expect(released).toMatchObject({ status: 200, body: { released_desktop_ids: [id] } });
      expect(await stateOf(id!)).toMatchObject({ status: 'Stopped', hypervisorId: null });
    };
    /** Its libvirtd again, in the host's own namespaces (the lab's first process there is its sh). */
    const restartLibvirtd = () => {
      const [sh] = pidsOf('sh');
      execFileSync('nsenter', ['-t', sh!, '-m', '-u', '-n', '-p', '/usr/sbin/libvirtd', '-d', ...(lab.hosts[last]!.tlsUri ? ['--listen'] : [])], { timeout: scaled(30_000) });
    };
    const bringBack = async (how: () => void) => {
      how();
      await until('the host online again', async () => (await view())?.state === 'Online', 60_000);
    };

    // 1. Its libvirtd dies, its guest goes on (as when only the server loses the host).
    await startOnLast();
    expect((await send(admin, `${A}/hypervisors/${hostIds[last]}/down`, { method: 'POST' })).body).toMatchObject({ description_code: 'hypervisor_online' });
    await loseLast('libvirtd killed', () => kill('libvirtd'));
    expect(guestsOf(id!)).toHaveLength(1);
    // Back: the database says the desktop is stopped, so what still runs there is destroyed, not adopted.
    await bringBack(restartLibvirtd);
    await until('the stale guest gone from the host', async () => guestsOf(id!).length === 0 && !onHost(last).includes(id!), 30_000);
    expect(await stateOf(id!)).toMatchObject({ status: 'Stopped', hypervisorId: null });

    // 2. The whole host goes: it vanishes from the network (libvirt's keepalive notices) and its guests
    // with it; marked down, the desktop starts on another host.
    await startOnLast();
    await loseLast('the host cut off the network', () => {
      link('down');
      kill('qemu-system-x86');
    });
    expect((await send(user, `/api/v3/desktop/start/${id}`)).status).toBe(200);
    const moved = await until('started on another host', async () => {
      const s = await stateOf(id!);
      return s.status === 'Started' && s;
    }, 60_000);
    expect(others(last).map((i) => hostIds[i])).toContain(moved.hypervisorId);
    await bringBack(() => link('up'));
    expect(await stateOf(id!)).toMatchObject({ status: 'Started', hypervisorId: moved.hypervisorId });
    expect(onHost(last)).not.toContain(id);
    expect(onHost(hostIds.indexOf(moved.hypervisorId!))).toContain(id);

    // A second stop forces it off at once.
    expect((await send(user, `/api/v3/desktop/stop/${id}`)).status).toBe(200);
    expect((await send(user, `/api/v3/desktop/stop/${id}`)).status).toBe(200);
    await until(`${id} stopped`, async () => (await stateOf(id!)).status === 'Stopped', 30_000);
    for (let i = 0; i < lab.hosts.length; i++) expect(onHost(i)).not.toContain(id);
  }, scaled(300_000));
});
