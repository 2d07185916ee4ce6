// Disks where the pool is: a lab hypervisor WITHOUT the installation's storage folder (no `default`
// pool, only its own `local` one) runs desktops the way Ravada's nodes do. A pool too small for the
// template's base refuses the start with a code, nothing made. The first start there
// copies the template's base into the host's pool (a `base_copy` job the admin jobs API shows with
// its progress; two starts at once wait for the same copy), the desktop's disk goes there too and binds
// the desktop to that host; a later desktop of the same template reuses the copy; its disk grows there;
// a template made of a desktop there is copied to the storage folder, the desktop goes on there; deleting a
// desktop deletes its disk on the host; deleting a template (its recycle bin entry purged) deletes its copy
// on the host; the host cannot be removed while it holds disks; the console's storage check looks for them on
// the host; a category mapped to a pool sends its desktops' disks to the host's pool of that name (none: refused);
// once empty, its removal deletes the copies of bases it held.
// One lab host for the file (the placement rule across hosts has its unit test).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ZAdminJobList, ZAdminStorageCheck, type TAdminJob } from '@vdi/contracts';
import { schema } from '../../src/db';
import { privateKeyFile, writeSshCommand } from '../../src/host/ssh-identity';
import { describeIf, firstMissing, missingFile, missingNetAdmin } from '../helpers/can-run';
import { addLabHosts, labProgramsMissing, labTag, startServerLab, startsOnLabOnly, type TestLab } from '../helpers/lab';
import { call, loginToken, startTestServer, testImagesDir, type TestServer } from '../helpers/server';
import { scaled } from '../helpers/slowdown';
import { until } from '../helpers/wait';

const missing = firstMissing(
  missingNetAdmin(),
  labProgramsMissing(),
  missingFile(join(testImagesDir(), 'vmlinuz'), "the demo guest's kernel"),
);

const A = '/api/v3/admin';

describeIf(missing)('disks where the pool is: a hypervisor without the shared storage gets the template base', () => {
  let server: TestServer;
  let lab: TestLab;
  let admin: string;
  let user: string;
  let hostId: string;
  const tag = labTag('pm');
  /** the desktops of the demo template started on the host: the user's, the advanced user's, the admin's */
  const started: { id: string; token: string }[] = [];
  /** the template made of a desktop on the host: its disk's row, its copy there, its file here */
  const templates: { id: string; storageId: string; hostPath: string; file: string }[] = [];

  const send = async (token: string, path: string, opts: { method?: string; body?: unknown } = {}) => {
    const res = await call(server, path, { token, ...opts });
    return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> };
  };
  const virsh = (...args: string[]) =>
    execFileSync('virsh', ['-q', '-c', `qemu:///system?socket=${lab.hosts[0]!.socket}`, ...args], { encoding: 'utf8', timeout: scaled(30_000) })
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  /** The host's `local` pool: volume name → path. */
  const volumes = () => {
    virsh('pool-refresh', 'local');
    return new Map(virsh('vol-list', 'local').map((l) => l.split(/\s+/) as [string, string]));
  };
  const diskOf = async (desktopId: string) => {
    const [row] = await server.ctx.db
      .select({ storage: schema.storage })
      .from(schema.domainDisks)
      .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId))
      .where(eq(schema.domainDisks.domainId, desktopId));
    return row!.storage;
  };
  const statusOf = async (id: string) => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0]?.status;
  const copyJobs = async () => ZAdminJobList.parse((await send(admin, `${A}/jobs?kind=base_copy&per_page=50`)).body).items;
  const copiesOf = async (storageId: string) => server.ctx.db.select().from(schema.hostBaseCopies).where(eq(schema.hostBaseCopies.storageId, storageId));
  /** A command in the lab host's mount namespace (its libvirtd's). */
  const inHost = (...cmd: string[]) => {
    const pid = execFileSync('ip', ['netns', 'pids', `vdilab-${tag}-1`], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .find((p) => readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'libvirtd');
    execFileSync('nsenter', ['-t', pid!, '-m', ...cmd], { timeout: scaled(10_000) });
  };

  beforeAll(async () => {
    server = await startTestServer({ startConcurrency: 2 });
    // No shared storage for the portal: the host's pools are the lab's `shared` folder (not the
    // installation's storage) and its own `local` one.
    lab = await startServerLab(server, { folder: 'i25pools-lab', subnet: '10.237.1.0/24', hosts: 1, tag });
    [admin, user] = [await loginToken(server, 'admin'), await loginToken(server, 'user')];
    const [view] = await addLabHosts(server, admin, lab.hosts);
    expect(view!.pools.map((p) => p.name).sort()).toEqual(['local', 'shared']);
    hostId = view!.id;
    await startsOnLabOnly(server, admin);
  }, scaled(90_000));

  afterAll(async () => {
    await server?.close();
    await lab?.close();
  });

  it("a host pool too small for the template's base refuses the start with storage_pool_full; nothing is copied or moved", async () => {
    const mine = (await send(user, '/api/v3/user/desktops')).body as unknown as { id: string; name: string }[];
    const desktop = mine.find((d) => d.name !== 'GPU desktop')!;
    const before = await diskOf(desktop.id);
    // The host's own pool made 8 MiB (a tmpfs over its folder, in the host's mount namespace): the demo base is ~16 MB.
    inHost('mount', '-t', 'tmpfs', '-o', 'size=8m', 'i25pools2-full', '/var/lib/libvirt/images');
    try {
      virsh('pool-refresh', 'local');
      const refused = await send(user, `/api/v3/desktop/start/${desktop.id}`);
      expect(refused).toMatchObject({ status: 428, body: { description_code: 'storage_pool_full', params: { pool: 'local' } } });
      expect((refused.body.params as { free_bytes: number }).free_bytes).toBeLessThanOrEqual(8 * 1024 ** 2);
      expect(await statusOf(desktop.id)).toBe('Stopped');
      expect(await copyJobs()).toEqual([]);
      expect(volumes().size).toBe(0);
      expect(await diskOf(desktop.id)).toEqual(before);
      expect(await server.ctx.engine.disks.exists(before.path)).toBe(true);
      expect(virsh('list', '--all', '--name')).toEqual([]);
    } finally {
      inHost('umount', '/var/lib/libvirt/images');
      virsh('pool-refresh', 'local');
    }
  }, scaled(60_000));

  it('the first starts copy the base into the host pool once, as a job with progress; the desktop runs there on its own disk', async () => {
    const mine = (await send(user, '/api/v3/user/desktops')).body as unknown as { id: string; name: string }[];
    const desktop = mine.find((d) => d.name !== 'GPU desktop')!;
    const before = await diskOf(desktop.id);
    expect(before.hypervisorId).toBeNull();
    const baseInfo = await server.ctx.engine.disks.info(before.path, { chain: true });
    const basePath = baseInfo.chain![1]!.path;
    const baseName = basePath.slice(basePath.lastIndexOf('/') + 1);

    // Another user's desktop of the same template is started at the same moment: it waits for the same copy.
    const advanced = await loginToken(server, 'advanced');
    const theirs = ((await send(advanced, '/api/v3/user/desktops')).body as unknown as { id: string; name: string }[]).find((d) => d.name !== 'GPU desktop')!;
    const [a, b] = await Promise.all([send(user, `/api/v3/desktop/start/${desktop.id}`), send(advanced, `/api/v3/desktop/start/${theirs.id}`)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    // Watched through the admin API while it runs: the copy's job, its progress never going back.
    const seen: TAdminJob[] = [];
    await until('both desktops started', async () => {
      seen.push(...(await copyJobs()));
      return (await statusOf(desktop.id)) === 'Started' && (await statusOf(theirs.id)) === 'Started';
    }, 60_000);
    expect((await diskOf(theirs.id)).hypervisorId).toBe(hostId);
    started.push({ id: theirs.id, token: advanced });
    const jobs = await copyJobs();
    expect(jobs).toHaveLength(1);
    // Named after the template whose base it is, not the file.
    const [mineRow] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktop.id));
    const [template] = await server.ctx.db.select({ name: schema.domains.name }).from(schema.domains).where(eq(schema.domains.id, mineRow!.templateId!));
    expect(jobs[0]).toMatchObject({ kind: 'base_copy', status: 'done', progress: 100, target_name: template!.name, error: null });
    const progress = seen.filter((j) => j.id === jobs[0]!.id).map((j) => j.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    // Beside its raw baselines: the same file by `virsh vol-upload` over the same qemu+ssh (the
    // installation's key and this host's ssh command), and on the host's own socket (no ssh).
    const took = new Date(jobs[0]!.updated).getTime() - new Date(jobs[0]!.created).getTime();
    const size = (await server.ctx.engine.disks.fileFacts(basePath))!.size;
    expect(jobs[0]!.bytes).toEqual({ done: size, total: size });
    const q = new URLSearchParams({ keyfile: privateKeyFile(server.config.dataDir), command: await writeSshCommand(server.config.dataDir, hostId) });
    const overSsh = `qemu+ssh://root@${lab.hosts[0]!.address}/system?${q.toString().replace(/%2F/g, '/')}`;
    const rawUpload = (...connect: string[]) => {
      virsh('vol-create-as', 'local', 'baseline.img', String(size), '--format', 'raw');
      const t0 = Date.now();
      execFileSync('virsh', ['-q', ...connect, 'vol-upload', '--pool', 'local', 'baseline.img', basePath], { timeout: scaled(60_000) });
      const ms = Date.now() - t0;
      virsh('vol-delete', '--pool', 'local', 'baseline.img');
      return ms;
    };
    const [ssh, unix] = [rawUpload('-c', overSsh), rawUpload('-c', `qemu:///system?socket=${lab.hosts[0]!.socket}`)];
    console.log(`base copy: ${size} bytes in ${took} ms as a job (virsh vol-upload over the same qemu+ssh ${ssh} ms, on the host's socket ${unix} ms); progress seen ${JSON.stringify([...new Set(progress)])}`);

    // It runs on the host, from its disk in the host's own pool, on the copied base.
    expect(virsh('list', '--name')).toContain(desktop.id);
    const vols = volumes();
    const after = await diskOf(desktop.id);
    expect(after.hypervisorId).toBe(hostId);
    expect(vols.get(after.path.slice(after.path.lastIndexOf('/') + 1))).toBe(after.path);
    expect(vols.has(baseName)).toBe(true);
    // The copy is recorded against the template's disk, on this host.
    const [baseRow] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.path, basePath));
    expect(await copiesOf(baseRow!.id)).toMatchObject([{ hypervisorId: hostId, path: vols.get(baseName) }]);
    const xml = virsh('dumpxml', desktop.id).join('\n');
    expect(xml).toContain(`<source file='${after.path}'`);
    expect(xml).toContain(`<source file='${vols.get(baseName)}'`);
    // Its old file in the storage folder is gone (the disk lives on the host now).
    expect(await server.ctx.engine.disks.exists(before.path)).toBe(false);
    started.unshift({ id: desktop.id, token: user });
  }, scaled(90_000));

  it('a later desktop of the same template reuses the copy (no second job)', async () => {
    const mine = (await send(admin, '/api/v3/user/desktops')).body as unknown as { id: string; name: string }[];
    const desktop = mine.find((d) => d.name !== 'GPU desktop')!;
    expect((await send(admin, `/api/v3/desktop/start/${desktop.id}`)).status).toBe(200);
    await until('the later desktop started', async () => (await statusOf(desktop.id)) === 'Started', 60_000);
    expect(await copyJobs()).toHaveLength(1);
    expect(virsh('list', '--name')).toContain(desktop.id);
    expect((await diskOf(desktop.id)).hypervisorId).toBe(hostId);
    started.push({ id: desktop.id, token: admin });
  }, scaled(60_000));

  it('a template of a stopped desktop on the host: its disk copied to the storage folder, the desktop goes on there on a new disk that grows there', async () => {
    const { id, token } = started[0]!;
    // Stopped at once (a second stop while shutting down is the force stop).
    expect((await send(token, `/api/v3/desktop/stop/${id}`)).status).toBe(200);
    await send(token, `/api/v3/desktop/stop/${id}`);
    await until('stopped', async () => (await statusOf(id)) === 'Stopped', 30_000);
    const old = await diskOf(id);
    const [parent] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, old.parentId!));
    const baseVol = volumes().get(basename(parent!.path))!;

    const t0 = Date.now();
    const made = await send(admin, '/api/v3/template', { body: { desktop_id: id, name: 'From a host disk' } });
    expect(made.status).toBe(200);
    const templateId = (made.body as { id: string }).id;
    await until('template made', async () => (await statusOf(templateId)) === 'Stopped' && (await statusOf(id)) === 'Stopped', 60_000);
    console.log(`template from a host disk: ${Date.now() - t0} ms (disk of ${old.actualSize} bytes)`);
    // The template's disk: the desktop's former disk, copied here, on the template's base here.
    const [templateDisk] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, old.id));
    expect(templateDisk).toMatchObject({ kind: 'template', hypervisorId: null });
    const info = await server.ctx.engine.disks.info(templateDisk!.path, { chain: true });
    expect(info.chain!.map((l) => l.path)).toEqual([templateDisk!.path, parent!.path]);
    // The former disk stays on the host as its copy of the template, recorded; the desktop's new disk is there on it.
    expect(await copiesOf(old.id)).toMatchObject([{ hypervisorId: hostId, path: old.path }]);
    const disk = await diskOf(id);
    expect(disk).toMatchObject({ kind: 'desktop', hypervisorId: hostId, parentId: old.id });
    expect(volumes().get(basename(disk.path))).toBe(disk.path);
    expect(virsh('vol-dumpxml', disk.path).join('\n')).toContain(`<path>${old.path}</path>`);
    expect(virsh('vol-dumpxml', old.path).join('\n')).toContain(`<path>${baseVol}</path>`);

    const GiB = 1024 ** 3;
    const grow = await send(admin, `/api/v3/storage/${disk.id}/priority/low/increase/1`, { method: 'PUT' });
    expect(grow.status).toBe(200);
    await until('grown', async () => (await diskOf(id)).virtualSize === disk.virtualSize + GiB && (await statusOf(id)) === 'Stopped', 30_000);
    const capacity = virsh('vol-info', '--bytes', disk.path).find((l) => l.startsWith('Capacity:'));
    expect(capacity).toMatch(new RegExp(`\\b${disk.virtualSize + GiB} bytes`));
    // It starts there again, on the template's copy (no copy job).
    expect((await send(token, `/api/v3/desktop/start/${id}`)).status).toBe(200);
    await until('started again', async () => (await statusOf(id)) === 'Started', 60_000);
    expect(await copyJobs()).toHaveLength(1);
    expect((await send(token, `/api/v3/desktop/stop/${id}`)).status).toBe(200);
    await send(token, `/api/v3/desktop/stop/${id}`);
    await until('stopped again', async () => (await statusOf(id)) === 'Stopped', 30_000);
    templates.push({ id: templateId, storageId: old.id, hostPath: old.path, file: templateDisk!.path });
  }, scaled(90_000));

  it('deleting a desktop deletes its disk on the host; the base copy stays for the others', async () => {
    const { id, token } = started[0]!;
    const disk = await diskOf(id);
    expect((await send(token, `/api/v3/desktop/${id}/permanent`, { method: 'DELETE' })).status).toBe(200);
    const vols = volumes();
    expect([...vols.values()]).not.toContain(disk.path);
    expect(vols.size).toBe(4); // the base, the new template's copy and the other two desktops' disks
    for (const other of started.slice(1)) expect([...vols.values()]).toContain((await diskOf(other.id)).path);
  }, scaled(60_000));

  it("deleting a template, its recycle bin entry purged, deletes its copy on the host and the copy's record", async () => {
    const t = templates[0]!;
    expect((await send(admin, `/api/v3/template/${t.id}`, { method: 'DELETE' })).status).toBe(200);
    // In the bin its copy stays (a restore needs it); purged, it goes.
    expect([...volumes().values()]).toContain(t.hostPath);
    const [entry] = await server.ctx.db.select().from(schema.recycleBin).where(eq(schema.recycleBin.itemName, 'From a host disk'));
    expect((await send(admin, `/api/v3/recycle_bin/${entry!.id}`, { method: 'DELETE' })).status).toBe(200);
    await until('purged', async () => (await copiesOf(t.storageId)).length === 0, 30_000);
    expect([...volumes().values()]).not.toContain(t.hostPath);
    expect(volumes().size).toBe(3);
    expect(await server.ctx.engine.disks.exists(t.file)).toBe(false);
  }, scaled(60_000));

  it('the host cannot be removed while a desktop disk lives there, even with nothing running', async () => {
    for (const { id, token } of started.slice(1)) {
      expect((await send(token, `/api/v3/desktop/stop/${id}`)).status).toBe(200);
      await send(token, `/api/v3/desktop/stop/${id}`);
      await until('stopped', async () => (await statusOf(id)) === 'Stopped', 30_000);
    }
    const removal = await send(admin, `${A}/hypervisors/${hostId}`, { method: 'DELETE' });
    expect(removal).toMatchObject({ status: 409, body: { description_code: 'hypervisor_holds_disks', params: { disks: 2 } } });
  }, scaled(60_000));

  it("the console's storage check looks for these disks on their host: there, none missing; deleted behind its back, listed", async () => {
    const check = async () => ZAdminStorageCheck.parse((await send(admin, `${A}/storage/check`)).body).rows_without_files.map((r) => r.id);
    const disks = await Promise.all(started.slice(1).map((d) => diskOf(d.id)));
    expect(await check()).toEqual([]);
    virsh('vol-delete', disks[0]!.path);
    expect(await check()).toEqual([disks[0]!.id]);
  }, scaled(60_000));

  it("a category mapped to a pool: no host with it refuses the start (pool_unreachable); the host's pool of that name gets the disk, on the base it holds", async () => {
    const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, started[1]!.id));
    const made = await send(user, '/api/v3/persistent_desktop', { body: { template_id: row!.templateId, name: 'On the category pool' } });
    expect(made.status).toBe(200);
    const id = (made.body as { id: string }).id;
    await until('created', async () => (await statusOf(id)) === 'Stopped', 30_000);
    const mapTo = async (storage_pool: string | null) => expect((await send(admin, `${A}/categories/default`, { method: 'PUT', body: { storage_pool } })).status).toBe(200);
    try {
      await mapTo('nowhere');
      const before = await diskOf(id);
      const refused = await send(user, `/api/v3/desktop/start/${id}`);
      expect(refused).toMatchObject({ status: 428, body: { description_code: 'hypervisors_not_available', params: { reason: 'pool_unreachable' } } });
      expect(await statusOf(id)).toBe('Stopped');
      expect(await diskOf(id)).toEqual(before);
      // The host reaches its `shared` pool as well as its own `local` one: the category's sends the disk there.
      await mapTo('shared');
      expect((await send(user, `/api/v3/desktop/start/${id}`)).status).toBe(200);
      await until('started on the category pool', async () => (await statusOf(id)) === 'Started', 60_000);
      const disk = await diskOf(id);
      expect(disk.hypervisorId).toBe(hostId);
      virsh('pool-refresh', 'shared');
      expect(virsh('vol-list', 'shared').map((l) => l.split(/\s+/)[1])).toContain(disk.path);
      expect([...volumes().values()]).not.toContain(disk.path);
      // The template's base the host holds (in its own pool) is read from there: no second copy.
      expect(await copyJobs()).toHaveLength(1);
      const [base] = await copiesOf(before.parentId!);
      expect(base!.path.startsWith('/var/lib/libvirt/images/')).toBe(true);
      expect(virsh('vol-dumpxml', disk.path).join('\n')).toContain(`<path>${base!.path}</path>`);
      expect(await server.ctx.engine.disks.exists(before.path)).toBe(false);
    } finally {
      await mapTo(null);
    }
    expect((await send(user, `/api/v3/desktop/stop/${id}`)).status).toBe(200);
    await send(user, `/api/v3/desktop/stop/${id}`);
    await until('stopped', async () => (await statusOf(id)) === 'Stopped', 30_000);
    const disk = await diskOf(id);
    expect((await send(user, `/api/v3/desktop/${id}/permanent`, { method: 'DELETE' })).status).toBe(200);
    virsh('pool-refresh', 'shared');
    expect(virsh('vol-list', 'shared').map((l) => l.split(/\s+/)[1])).not.toContain(disk.path);
  }, scaled(60_000));

  it('once empty the host is removed, and the copies of template bases it held go with it', async () => {
    for (const { id, token } of started.slice(1)) expect((await send(token, `/api/v3/desktop/${id}/permanent`, { method: 'DELETE' })).status).toBe(200);
    expect(volumes().size).toBe(1); // the demo template's base
    expect((await send(admin, `${A}/hypervisors/${hostId}`, { method: 'DELETE' })).status).toBe(204);
    expect(volumes().size).toBe(0);
    expect(await server.ctx.db.select().from(schema.hostBaseCopies).where(eq(schema.hostBaseCopies.hypervisorId, hostId))).toEqual([]);
  }, scaled(60_000));
});
