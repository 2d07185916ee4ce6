// A desktop pool's prepared desktops spread over several hypervisors (issue 30, "by host"): two lab hosts
// (each its own network namespace, libvirtd and sshd, reached by qemu+ssh; the installation's storage folder
// is their `default` pool), the server's own host taking no new starts. A pool of the demo template with 4
// prepared desktops gets them on both hosts — the pool's `counts.by_host` says so and each host's libvirtd
// runs them; a person takes one and `by_host` shows it in use on its host; a host the admin drains gets no
// more: the pool prepares the replacement on the other host; a host lost and marked down: the pool prepares
// its desktops again on the host left. One lab for the whole file.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ZAdminHypervisorList, ZAdminHypervisorMarkedDown, ZPool, ZPoolTakeAnswer, type TPool, type TPoolCounts } from '@vdi/contracts';
import { schema } from '../../src/db';
import { describeIf, firstMissing, missingFile, missingNetAdmin } from '../helpers/can-run';
import { addLabHosts, labProgramsMissing, labTag, startServerLab, startsOnLabOnly, virshOn, type TestLab } from '../helpers/lab';
import { call, loginToken, startTestServer, testImagesDir, type TestServer } from '../helpers/server';
import { scaled } from '../helpers/slowdown';
import { until } from '../helpers/wait';

const missing = firstMissing(
  missingNetAdmin(),
  labProgramsMissing(),
  missingFile(join(testImagesDir(), 'vmlinuz'), "the demo guest's kernel"),
);

const A = '/api/v3/admin';

describeIf(missing)("a desktop pool's prepared desktops over two lab hypervisors", () => {
  let server: TestServer;
  let lab: TestLab;
  let admin: string;
  let advanced: string;
  let pool: string;
  /** the lab hosts' hypervisor ids, in the lab's order */
  let hostIds: string[] = [];
  const tag = labTag('ph');

  const poolOf = async (): Promise<TPool> => {
    const r = await call(server, `/api/v3/desktop-pools/${pool}`, { token: advanced });
    expect(r.status, await r.clone().text()).toBe(200);
    return ZPool.parse(await r.json());
  };
  /** The pool's desktops: id → the hypervisor it runs on (null: none yet). */
  const desktops = async () =>
    new Map((await server.ctx.db.select({ id: schema.domains.id, host: schema.domains.hypervisorId }).from(schema.domains).where(eq(schema.domains.poolId, pool))).map((r) => [r.id, r.host]));
  /** The domains lab host `i`'s own libvirtd runs (asked on its socket, not through the server). */
  const onHost = (i: number) => virshOn(lab.hosts[i]!, 'list', '--name');
  const hostCount = (counts: TPoolCounts, i: number) => counts.by_host.find((h) => h.hypervisor === hostIds[i]) ?? { prepared: 0, in_use: 0, preparing: 0, name: '' };
  /** Every desktop the database places on a lab host runs there, and on no other lab host. */
  const runWhereRecorded = async () => {
    const running = lab.hosts.map((_, i) => onHost(i));
    for (const [id, host] of await desktops()) {
      if (host === null) continue;
      const i = hostIds.indexOf(host);
      expect(i, `${id} on a lab host`).toBeGreaterThanOrEqual(0);
      expect(running[i], `${id} runs on ${lab.hosts[i]!.name}`).toContain(id);
      for (const [j, names] of running.entries()) if (j !== i) expect(names).not.toContain(id);
    }
  };

  beforeAll(async () => {
    // Prepared as soon as its machine runs (POOL_BOOT_SECONDS 0: the demo guest's boot is not what this shows).
    server = await startTestServer({ env: { POOL_BOOT_SECONDS: '0', SHUTDOWN_TIMEOUT_SECONDS: '5' } });
    [admin, advanced] = await Promise.all([loginToken(server, 'admin'), loginToken(server, 'advanced')]);
    lab = await startServerLab(server, { folder: 'poolhosts-lab', subnet: '10.235.60.0/24', hosts: 2, tag, sharedStorage: true });
    hostIds = (await addLabHosts(server, admin, lab.hosts)).map((h) => h.id);
    await startsOnLabOnly(server, admin);
  }, scaled(120_000));

  afterAll(async () => {
    await server?.close();
    await lab?.close();
  }, scaled(120_000));

  it('prepares 4 desktops of the demo template spread over both hosts: by_host names both, and each host runs its own', async () => {
    const [template] = await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.kind, 'template'), eq(schema.domains.name, 'Demo Linux')));
    // Two equal hosts: the lab's share this machine's memory, each read by its heartbeat every few seconds, and while
    // the server and the lab have just started those readings move by hundreds of MB. Equal here: read within two
    // desktops' memory of each other (placement takes hosts within one desktop's memory as equally roomy).
    const free = await until('the two hosts reading about the same free memory', async () => {
      const views = ZAdminHypervisorList.parse(await (await call(server, `${A}/hypervisors`, { token: admin })).json()).items.filter((h) => hostIds.includes(h.id));
      const mb = views.map((h) => h.memory_free_mb);
      return views.length === 2 && Math.max(...mb) - Math.min(...mb) < 2 * template!.hardware.memoryMb && views;
    }, 60_000);
    console.log(`free memory as read: ${free.map((h) => `${h.name} ${h.memory_free_mb} MB`).join(', ')}`);
    const r = await call(server, '/api/v3/desktop-pools', {
      token: advanced,
      method: 'POST',
      body: { name: 'Lab pool', template_id: template!.id, allowed: { groups: ['default-students-1a'] }, max_desktops: 6, prepared: 4 },
    });
    expect(r.status, await r.clone().text()).toBe(200);
    pool = ZPool.parse(await r.json()).id;
    const started = Date.now();
    const counts = await until('4 prepared desktops', async () => {
      const c = (await poolOf()).counts;
      return c.prepared === 4 && c;
    }, 120_000);
    console.log(`4 prepared in ${Date.now() - started} ms: ${counts.by_host.map((h) => `${h.name} ${h.prepared}`).join(', ')}`);
    expect(counts).toMatchObject({ prepared: 4, preparing: 0, in_use: 0, target: 4 });
    expect(counts.by_host.map((h) => h.hypervisor).sort()).toEqual([...hostIds].sort());
    for (const [i, h] of lab.hosts.entries()) {
      expect(hostCount(counts, i)).toMatchObject({ name: h.name });
      expect(hostCount(counts, i).prepared).toBeGreaterThanOrEqual(1);
    }
    // What the pool says is what each host's libvirtd runs.
    for (const [i] of lab.hosts.entries()) {
      const mine = [...(await desktops())].filter(([, host]) => host === hostIds[i]).map(([id]) => id);
      expect(mine).toHaveLength(hostCount(counts, i).prepared);
      expect(onHost(i).filter((n) => mine.includes(n)).sort()).toEqual(mine.sort());
    }
    await runWhereRecorded();
  }, scaled(150_000));

  it('a person takes one: by_host shows it in use on its host, and the pool prepares the next', async () => {
    const sara = await loginToken(server, 'student01');
    const r = await call(server, `/api/v3/desktop-pools/${pool}/take`, { token: sara, method: 'POST' });
    expect(r.status, await r.clone().text()).toBe(200);
    const got = ZPoolTakeAnswer.parse(await r.json());
    expect(got.kind).toBe('desktop');
    const id = (got as { desktop_id: string }).desktop_id;
    const host = (await desktops()).get(id)!;
    const i = hostIds.indexOf(host);
    expect(i).toBeGreaterThanOrEqual(0);
    expect(onHost(i)).toContain(id);
    const counts = await until('4 prepared again, 1 in use', async () => {
      const c = (await poolOf()).counts;
      return c.prepared === 4 && c.in_use === 1 && c;
    }, 120_000);
    expect(hostCount(counts, i).in_use).toBe(1);
    expect(hostCount(counts, 1 - i).in_use).toBe(0);
    expect(counts.by_host.reduce((n, h) => n + h.prepared, 0)).toBe(4);
    await runWhereRecorded();
  }, scaled(150_000));

  it('a host the admin drains gets no new ones: the pool prepares the replacement on the other host', async () => {
    const before = await desktops();
    // Drain the host with the most of the pool's desktops (its prepared ones go on running there).
    const counts = (await poolOf()).counts;
    const drained = hostCount(counts, 0).prepared + hostCount(counts, 0).in_use >= hostCount(counts, 1).prepared + hostCount(counts, 1).in_use ? 0 : 1;
    const other = 1 - drained;
    const d = await call(server, `${A}/hypervisors/${hostIds[drained]}/drain`, { token: admin, method: 'PUT', body: { draining: true } });
    expect(d.status, await d.clone().text()).toBe(200);
    const pau = await loginToken(server, 'student02');
    // Take one from the drained host if it holds a prepared one (the others are on the other host already).
    const r = await call(server, `/api/v3/desktop-pools/${pool}/take`, { token: pau, method: 'POST' });
    expect(r.status, await r.clone().text()).toBe(200);
    expect(ZPoolTakeAnswer.parse(await r.json()).kind).toBe('desktop');
    const after = await until('4 prepared again, 2 in use', async () => {
      const c = (await poolOf()).counts;
      return c.prepared === 4 && c.in_use === 2 && c;
    }, 120_000);
    const now = await desktops();
    const fresh = [...now.keys()].filter((id) => !before.has(id));
    expect(fresh).toHaveLength(1);
    expect(now.get(fresh[0]!)).toBe(hostIds[other]);
    expect(onHost(other)).toContain(fresh[0]);
    expect(onHost(drained)).not.toContain(fresh[0]);
    // The drained host's count did not grow; what ran there goes on.
    expect(hostCount(after, drained).prepared + hostCount(after, drained).in_use).toBe(hostCount(counts, drained).prepared + hostCount(counts, drained).in_use);
    await runWhereRecorded();
  }, scaled(150_000));
  it('a host lost and marked down by the admin: its prepared desktops are released, and the pool prepares them again on the host left', async () => {
    // Both hosts take starts again; the one with more of the pool's prepared desktops goes.
    const undrain = await Promise.all(hostIds.map((id) => call(server, `${A}/hypervisors/${id}/drain`, { token: admin, method: 'PUT', body: { draining: false } })));
    expect(undrain.map((r) => r.status)).toEqual([200, 200]);
    const counts = (await poolOf()).counts;
    const lost = hostCount(counts, 0).prepared >= hostCount(counts, 1).prepared ? 0 : 1;
    const left = 1 - lost;
    const before = await desktops();
    // (the desktops given from there too: marked down, every desktop it ran is released)
    const poolThere = [...before].filter(([, host]) => host === hostIds[lost]).map(([id]) => id);
    expect(hostCount(counts, lost).prepared).toBeGreaterThanOrEqual(1);
    // It vanishes from the network and its guests with it (its link on the lab's bridge, as lab.ts names it).
    const ns = `vdilab-${tag}-${lost + 1}`;
    const link = (state: 'up' | 'down') => execFileSync('ip', ['link', 'set', `vdilab${tag}v${lost + 1}`, state]);
    const hostView = async () => ZAdminHypervisorList.parse(await (await call(server, `${A}/hypervisors`, { token: admin })).json()).items.find((h) => h.id === hostIds[lost]);
    const lostAt = Date.now();
    link('down');
    for (const pid of execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n').filter(Boolean)) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'qemu-system-x86') process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await until('the host offline', async () => (await hostView())?.state === 'Offline', 45_000);
    const down = await call(server, `${A}/hypervisors/${hostIds[lost]}/down`, { token: admin, method: 'POST' });
    expect(down.status, await down.clone().text()).toBe(200);
    const released = ZAdminHypervisorMarkedDown.parse(await down.json()).released_desktop_ids;
    expect([...released].sort()).toEqual([...poolThere].sort());
    const after = await until('4 prepared again, all on the host left', async () => {
      const c = (await poolOf()).counts;
      return c.prepared === 4 && hostCount(c, lost).prepared + hostCount(c, lost).preparing === 0 && c;
    }, 120_000);
    console.log(`host lost to 4 prepared on the other: ${Date.now() - lostAt} ms`);
    expect(hostCount(after, left).prepared).toBe(4);
    const now = await desktops();
    const fresh = [...now].filter(([id, host]) => !before.has(id) && host !== null);
    expect(fresh.length).toBeGreaterThanOrEqual(hostCount(counts, lost).prepared);
    for (const [id, host] of fresh) {
      expect(host).toBe(hostIds[left]);
      expect(onHost(left)).toContain(id);
    }
    // Back on the network: nothing of the pool runs there again (what the database says stopped is not adopted).
    link('up');
    await until('the host online again', async () => (await hostView())?.state === 'Online', 60_000);
    expect(onHost(lost).filter((n) => now.has(n))).toEqual([]);
    await runWhereRecorded();
  }, scaled(240_000));
});
