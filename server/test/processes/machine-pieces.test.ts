// This machine's own pieces in cluster mode (modules/pieces, decision 0019): three real server processes
// behind HAProxy, all given the same guest network, RD Gateway, bastion and VPN ports, and a lab host joined
// to the guest network. Exactly one process runs the pieces (the PostgreSQL advisory lock's holder): the RD
// Gateway's TLS, the bastion's SSH banner and the WireGuard endpoint (`wg show`) answer; every process hands
// out the one VPN file. A desktop on the guest network started through the balancer gets its address whichever
// process answers. kill -9 of the holder: another process takes the pieces over within the bound, the
// listeners answer again, the endpoint keeps its peer, and the guest's network was adopted (same bridge, the
// guest still answers).
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { ensureSshIdentity, publicKey } from '../../src/host/ssh-identity';
import { PIECES_LOCK } from '../../src/modules/pieces/service';
import { overlaps, parseCidr } from '../../src/network/plan';
import { describeIf, firstMissing, itIf, missingFile, missingPrograms } from '../helpers/can-run';
import { guestNetworkMissing } from '../helpers/guest-network';
import { addLabHosts, labProgramsMissing, labTag, startTestLab, type TestLab } from '../helpers/lab';
import { api, signIn } from '../helpers/process';
import { startProcesses, type ProcessCluster } from '../helpers/processes';
import { testImagesDir, type TestServer } from '../helpers/server';
import { scaled } from '../helpers/slowdown';
import { until } from '../helpers/wait';

const adminUrl = process.env.TEST_DATABASE_URL;
const missing = firstMissing(
  adminUrl ? undefined : 'needs TEST_DATABASE_URL',
  missingPrograms('haproxy', 'bridge'),
  guestNetworkMissing(),
  labProgramsMissing(),
  missingFile(join(testImagesDir(), 'vmlinuz'), "the demo guest's kernel"),
);
const describe = describeIf(missing);
const it = itIf(missing);

/** Whether `port` on loopback completes a TLS handshake (the RD Gateway). */
const tlsAnswers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, timeout: 3000 }, () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });

/** The first line `port` on `host` says (an SSH server's banner), or '' when it does not answer. */
const firstLine = (port: number, host = '127.0.0.1') =>
  new Promise<string>((resolve) => {
    let text = '';
    const s = connect({ host, port, timeout: 3000 });
    const done = () => (s.destroy(), resolve(text.split('\r\n')[0] ?? ''));
    s.on('data', (b: Buffer) => {
      text += b.toString('latin1');
      if (text.includes('\n')) done();
    });
    s.once('error', done);
    s.once('timeout', done);
  });

/** Whether the guest at `host` answers a TCP connection at all (accepted or refused: its own stack replied). */
const guestAnswers = (host: string) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host, port: 9, timeout: 2000 });
    const done = (ok: boolean) => (s.destroy(), resolve(ok));
    s.once('connect', () => done(true));
    s.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED'));
    s.once('timeout', () => done(false));
  });

type Desktop = { id: string; state: string; ip: string | null };

describe("this machine's pieces in cluster mode", () => {
  let cluster: ProcessCluster;
  let lab: TestLab;
  let db: pg.Client;
  let admin: string;
  let desktopIp = '';
  const vni = randomInt(100_000, 0xffffff);

  /** The VPN endpoint as `wg` reads it in the guest network's namespace. */
  const wg = (...args: string[]) =>
    execFileSync('ip', ['netns', 'exec', cluster.pieces!.network.namespace, 'wg', 'show', `${cluster.pieces!.network.linkPrefix}wg`, ...args], { encoding: 'utf8' }).trim();
  const wgListenPort = () => wg('listen-port');
  const wgPeers = () => wg('peers').split('\n').filter(Boolean);

  /** The guest network's bridge (its interface index: a bridge made anew gets another). */
  const bridgeIndex = () => (JSON.parse(execFileSync('ip', ['-n', cluster.pieces!.network.namespace, '-j', 'link', 'show', 'br0'], { encoding: 'utf8' })) as { ifindex: number }[])[0]?.ifindex;

  /** The SERVER_IDs of the processes holding the pieces' lock now (pg_stat_activity's name of its locks' connection). */
  const holders = async () => {
    const { rows } = await db.query<{ name: string }>(
      `SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::int::oid AND l.objid = $2::int::oid AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [PIECES_LOCK[0], PIECES_LOCK[1]],
    );
    return rows.map((r) => r.name);
  };

  beforeAll(async () => {
    cluster = await startProcesses({ adminUrl: adminUrl!, n: 3, firstPort: 19950, prefix: 'i26pieces', pieces: true, env: { GUEST_NETWORK_VNI: String(vni), SESSION_TOKEN_SECONDS: String(scaled(300)), LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn' } });
    db = new pg.Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    await ensureSshIdentity(cluster.dataDir);
    lab = await startTestLab({
      dir: mkdtempSync('/tmp/i26pieces-lab-'),
      subnet: '10.232.44.0/24',
      hosts: 1,
      tag: labTag('pc'),
      authorizedKeys: [await publicKey(cluster.dataDir)],
      sharedPool: { name: 'default', path: join(cluster.dataDir, 'storage') },
      guestNetworkVni: vni,
    });
    admin = await signIn(cluster.url, 'admin');
    const [host] = await addLabHosts({ url: cluster.url } as TestServer, admin, lab.hosts);
    // Every process connected to it (the others hear of it through peers): a start is then placed
    // and watched in whichever process answers.
    for (let i = 0; i < 3; i++) {
      await until(`${cluster.ids[i]} connected to the host`, async () => {
        const r = await api<{ items: { id: string; state: string }[] }>(cluster.direct(i), admin, '/admin/hypervisors');
        return r.body.items?.find((h) => h.id === host!.id)?.state === 'Online';
      }, 60_000);
    }
  }, scaled(120_000));

  afterAll(async () => {
    await db?.end();
    await cluster?.close();
    await lab?.close();
  }, scaled(60_000));

  it('exactly one process runs the pieces: the RD Gateway, the bastion and the VPN endpoint answer; every process hands out the VPN file', async () => {
    const held = await until('a process holding the pieces', async () => ((await holders()).length > 0 ? holders() : undefined), 15_000);
    expect(held).toHaveLength(1);
    expect(cluster.ids).toContain(held[0]);
    expect(await tlsAnswers(cluster.pieces!.rdpGatewayPort)).toBe(true);
    expect(await firstLine(cluster.pieces!.bastionSshPort)).toMatch(/^SSH-2\.0-/);
    expect(wgListenPort()).toBe(String(cluster.pieces!.vpnPort));
    // Every process, the holder or not, offers the guest network's interface and the RDP viewers, and
    // hands out the VPN file naming the one endpoint (the server key shared under DATA_DIR/vpn).
    const files = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const allowed = await api<{ interfaces: { id: string }[]; viewers: string[] }>(cluster.direct(i), admin, '/user/hardware/allowed');
      expect(allowed.body.interfaces.map((x) => x.id), cluster.ids[i]).toContain('wireguard');
      expect(allowed.body.viewers, cluster.ids[i]).toContain('file_rdpgw');
      const vpn = await api<{ content: string }>(cluster.direct(i), admin, '/user/vpn/config');
      expect(vpn.status, `${cluster.ids[i]}: ${JSON.stringify(vpn.body)}`).toBe(200);
      expect(vpn.body.content).toContain(`Endpoint = 127.0.0.1:${cluster.pieces!.vpnPort}`);
      files.add(vpn.body.content);
    }
    expect(files.size).toBe(1);
    // This machine's own host is not used by these processes (LOCAL_HYPERVISOR=off): said as such, not as an error.
    const hosts = await api<{ items: { id: string; state: string; last_error: string | null; off_by_configuration: boolean }[] }>(cluster.url, admin, '/admin/hypervisors');
    expect(hosts.body.items.find((h) => h.id === 'local')).toMatchObject({ state: 'Offline', last_error: null, off_by_configuration: true });
    expect(hosts.body.items.filter((h) => h.id !== 'local').every((h) => !h.off_by_configuration)).toBe(true);
    // The admin's key reaches the endpoint (the holder applies the database at once when asked, else within 2 s).
    await until("the admin's peer on the endpoint", async () => wgPeers().length === 1, 15_000);
  }, scaled(30_000));

  it("a desktop on the guest network started through the balancer gets its address from the holder's DHCP, and answers there", async () => {
    const templates = await api<{ id: string }[]>(cluster.url, admin, '/user/templates');
    const created = await api<{ id: string }>(cluster.url, admin, '/persistent_desktop', {
      body: { template_id: templates.body[0]!.id, name: 'On the guest network', hardware: { interfaces: ['default', 'wireguard'] } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id;
    let last: unknown;
    const desktop = async () => {
      const r = await api<Desktop[]>(cluster.url, admin, '/user/desktops');
      last = r.body;
      return Array.isArray(r.body) ? r.body.find((d) => d.id === id) : undefined;
    };
    await until('the desktop made', async () => (await desktop())?.state === 'Stopped', 30_000).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(last).slice(0, 2000)}\n${cluster.output().slice(-3000)}`);
    });
    const started = Date.now();
    const start = await api(cluster.url, admin, `/desktop/start/${id}`);
    expect(start.status, JSON.stringify(start.body)).toBe(200);
    const ip = await until('Started with an address', async () => {
      const d = await desktop();
      return d?.state === 'Started' && d.ip ? d.ip : undefined;
    }, 90_000).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(last).slice(0, 1500)}\n${cluster.output().slice(-5000)}`);
    });
    console.log(`address after ${Date.now() - started} ms`);
    expect(overlaps(parseCidr(`${ip}/32`)!, parseCidr(cluster.pieces!.network.cidr)!)).toBe(true);
    expect(await until('the guest answering', () => guestAnswers(ip), 30_000)).toBe(true);
    desktopIp = ip;
  }, scaled(150_000));

  it('kill -9 of the holder: another process takes the pieces over within the bound, adopting the guest network', async () => {
    const [holder] = await holders();
    const i = cluster.ids.indexOf(holder!);
    const bridgeBefore = bridgeIndex();
    const killedAt = Date.now();
    await cluster.kill(i);
    const next = await until('another process holding the pieces', async () => {
      const now = await holders();
      return now.length === 1 && now[0] !== holder ? now[0] : undefined;
    }, 15_000);
    await until('the RD Gateway answering again', () => tlsAnswers(cluster.pieces!.rdpGatewayPort), 15_000);
    await until('the bastion answering again', async () => /^SSH-2\.0-/.test(await firstLine(cluster.pieces!.bastionSshPort)), 15_000);
    // The VPN endpoint adopted with its port and its peer.
    expect(wgListenPort()).toBe(String(cluster.pieces!.vpnPort));
    expect(wgPeers()).toHaveLength(1);
    const tookMs = Date.now() - killedAt;
    console.log(`${holder} killed: ${next} runs the pieces, its listeners answering after ${tookMs} ms`);
    expect(tookMs).toBeLessThan(scaled(10_000));
    // The guest keeps its network (adopted, not made anew: the same bridge): it answers across the tunnel.
    expect(bridgeIndex()).toBe(bridgeBefore);
    expect(desktopIp).not.toBe('');
    expect(await until('the guest answering', () => guestAnswers(desktopIp), 30_000)).toBe(true);
  }, scaled(120_000));
});
