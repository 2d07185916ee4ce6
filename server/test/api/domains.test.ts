import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { and, eq } from 'drizzle-orm';
import { io, type Socket } from 'socket.io-client';
import { schema } from '../../src/db';
import { info } from '../../src/engine/disks';
import { call, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';

// New desktops (POST /persistent_desktop) and editing them (GET /domain/info, PUT /domain/…):
// every rule and each refusal. No machine boots here: states are set in the database where a
// rule needs a running desktop (the lifecycle itself is tested in desktops.test.ts).

let server: TestServer;
let advanced: string; // Teo, advanced, group Teachers: no quota, so the fallback 128 / 128 / 500
let nora: string; // student03, Students 1B: desktops 3, memory 2, vcpus 2, disk 50
let iker: string; // student04, Students 1B
let sara: string; // student01, Students 1A
let manager: string;
let demoTemplate: string;

beforeAll(async () => {
  // With a guest network of its own: the RDP viewers and the wireguard interface are offered.
  server = await startTestServer({ network: true });
  [advanced, nora, iker, sara, manager] = await Promise.all(['advanced', 'student03', 'student04', 'student01', 'manager'].map((u) => loginToken(server, u)));
  const [t] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
  demoTemplate = t!.id;
}, scaled(240_000));
afterAll(async () => server?.close());

const json = async (r: Response) => ({ status: r.status, body: await r.json() });
const create = (token: string, body: Record<string, unknown>) => call(server, '/api/v3/persistent_desktop', { token, body: { template_id: demoTemplate, ...body } });
const infoOf = async (token: string, id: string) => (await call(server, `/api/v3/domain/info/${id}`, { token })).json();
const edit = (token: string, id: string, body: unknown) => call(server, `/api/v3/domain/${id}`, { token, method: 'PUT', body });
const row = async (id: string) => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0]!;
const setStatus = (id: string, status: string) => server.ctx.db.update(schema.domains).set({ status }).where(eq(schema.domains.id, id));
const expectCode = async (r: Response, status: number, code: string) => {
  const { body } = await json(r);
  expect({ status: r.status, code: body.description_code }).toEqual({ status, code });
  return body;
};
const listen = (token: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = io(`${server.url}/userspace`, { path: '/api/v3/socket.io', transports: ['websocket'], auth: { jwt: token }, reconnection: false });
    s.on('connect', () => resolve(s));
    s.on('connect_error', reject);
  });

describe('GET /user/hardware/allowed', () => {
  it('answers the lists and the applied quota, or the fallback 128 / 128 / 500', async () => {
    const student = await (await call(server, '/api/v3/user/hardware/allowed', { token: nora })).json();
    expect(student.quota).toEqual({ memory: 2, vcpus: 2, desktops_disk_size: 50 });
    expect(student.restriction_applied).toBe('group_quota');
    expect(student.interfaces.map((i: { id: string }) => i.id)).toEqual(['default', 'wireguard']);
    expect(student.videos.map((i: { id: string }) => i.id)).toEqual(['default', 'none']);
    expect(student.disk_bus.map((i: { id: string }) => i.id)).toEqual(['default', 'virtio', 'sata', 'ide']);
    expect(student.boot_order.map((i: { id: string }) => i.id)).toEqual(['disk', 'iso', 'network']);
    expect(student.reservables.vgpus.length).toBeGreaterThan(0);
    for (const item of student.graphics) expect(Object.keys(item).sort()).toEqual(['description', 'id', 'name']);
    const teacher = await (await call(server, '/api/v3/user/hardware/allowed', { token: advanced })).json();
    expect(teacher.quota).toEqual({ memory: 128, vcpus: 128, desktops_disk_size: 500 });
  });

  it('lets a user read (not change) the info of a template shared with them, to start a new desktop from it', async () => {
    const i = await infoOf(nora, demoTemplate);
    expect(i).toMatchObject({ kind: 'template', name: 'Demo Linux', editable: false });
    expect(i.hardware).toMatchObject({ vcpus: 1, memory: 0.25, boot_order: ['disk'] });
    await expectCode(await edit(nora, demoTemplate, { description: 'mine now' }), 403, 'forbidden');
  });

  it('answers the install types and the stock covers', async () => {
    const installs = await (await call(server, '/api/v3/media/installs', { token: nora })).json();
    expect(installs.map((i: { id: string }) => i.id)).toContain('win10Virtio');
    const images = await (await call(server, '/api/v3/images/desktops', { token: nora })).json();
    expect(images).toHaveLength(12);
    expect(images[0]).toEqual({ id: '1.svg', type: 'stock', url: '/assets/img/desktops/stock/1.svg', name: 'Desktop' });
    const svg = await fetch(`${server.url}/assets/img/desktops/stock/7.svg`);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await svg.text()).toMatch(/^<svg /);
    // The seed's older '1.jpg' ids are the same cover.
    expect((await fetch(`${server.url}/assets/img/desktops/stock/1.jpg`)).status).toBe(200);
    expect((await fetch(`${server.url}/assets/img/desktops/stock/99.svg`)).status).toBe(404);
    expect((await fetch(`${server.url}/assets/img/desktops/stock/..%2F..%2Fapp.ts`)).status).toBe(404);
  });
});

describe('POST /persistent_desktop', () => {
  it('creates a desktop on a thin overlay of the template, with the chosen hardware, and tells it live', async () => {
    const socket = await listen(advanced);
    const added = new Promise<{ id: string; name: string }>((resolve) => socket.on('desktop_add', (raw: string) => resolve(JSON.parse(raw))));
    const r = await create(advanced, {
      name: '  Lab, v1.0_a-b  ',
      description: 'For the networks course',
      hardware: { vcpus: 2, memory: 1.5, disk_size: 2, disk_bus: 'sata', boot_order: ['disk'] },
      guest_properties: { viewers: { browser_vnc: {}, file_spice: {} }, credentials: { username: 'teo', password: 'secret' }, fullscreen: true },
      image: { type: 'stock', id: '5.svg' },
    });
    const { body } = await json(r);
    expect(r.status).toBe(200);
    const event = await added;
    expect(event).toMatchObject({ id: body.id, name: 'Lab, v1.0_a-b' });
    // The event is built from what was written, without reading the views again: it is the list's entry.
    const listed = ((await (await call(server, '/api/v3/user/desktops', { token: advanced })).json()) as { id: string }[]).find((d) => d.id === body.id);
    expect(event).toEqual(listed);
    socket.close();

    const d = await row(body.id);
    expect(d).toMatchObject({ kind: 'desktop', persistent: true, status: 'Stopped', templateId: demoTemplate, description: 'For the networks course' });
    expect(d.hardware).toMatchObject({ vcpus: 2, memoryMb: 1536, diskBus: 'sata', bootOrder: ['disk'] });
    expect(d.guestProperties).toEqual({ credentials: { username: 'teo', password: 'secret' }, fullscreen: true, viewers: { browser_vnc: { options: null }, file_spice: { options: null } } });
    expect(d.image).toEqual({ id: '5.svg', type: 'stock', url: '/assets/img/desktops/stock/5.svg' });
    const [template] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, demoTemplate));
    expect(d.hardware.interfaces[0]!.mac).not.toBe(template!.hardware.interfaces[0]!.mac);

    const [link] = await server.ctx.db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, d.id));
    const [disk] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, link!.storageId));
    const [base] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, disk!.parentId!));
    const chain = await info(disk!.path, { chain: true });
    expect(chain.backingFile).toBe(base!.path);
    expect(chain.virtualSize).toBe(2 * 1024 ** 3);
    expect(disk!.virtualSize).toBe(2 * 1024 ** 3);

    // GET /domain/info speaks GB.
    const i = await infoOf(advanced, d.id);
    expect(i.hardware).toMatchObject({ vcpus: 2, memory: 1.5, disk_size: 2, disk_bus: 'sata', boot_order: ['disk'] });
    expect(i).toMatchObject({ kind: 'desktop', editable: true, limited_hardware: false, template: { id: demoTemplate, name: 'Demo Linux' }, user_name: 'Teo Teacher' });
  });

  it('without hardware takes the template\'s', async () => {
    const { body } = await json(await create(nora, { name: 'Plain one' }));
    const d = await row(body.id);
    expect(d.hardware.memoryMb).toBe(256);
    expect(d.hardware.vcpus).toBe(1);
    expect(d.guestProperties.viewers).toEqual({ browser_vnc: { options: null }, file_spice: { options: null } });
  });

  it('refuses names outside 4–50 letters, numbers, space, comma, period, hyphen, underscore', async () => {
    for (const name of ['abc', '   ab   ', 'x'.repeat(51), 'semi;colon', 'slash/name', 'tag<b>']) {
      await expectCode(await create(advanced, { name }), 400, 'validation_error');
    }
    await expectCode(await create(advanced, { name: 'Fine', description: 'd'.repeat(256) }), 400, 'validation_error');
    expect((await create(advanced, { name: 'Ñandú è-1.2_3' })).status).toBe(200);
  });

  it('refuses a name the user already has (without case), not one another user has', async () => {
    await expectCode(await create(advanced, { name: 'lab, V1.0_A-B' }), 409, 'new_desktop_name_exists');
    expect((await create(iker, { name: 'Lab, v1.0_a-b' })).status).toBe(200);
  });

  it('refuses hardware over the applied quota (428), and memory off the 0.5 GB steps', async () => {
    await expectCode(await create(nora, { name: 'Too big', hardware: { memory: 2.5 } }), 428, 'desktop_new_memory_quota_exceeded');
    await expectCode(await create(nora, { name: 'Too big', hardware: { vcpus: 3 } }), 428, 'desktop_new_vcpu_quota_exceeded');
    await expectCode(await create(nora, { name: 'Too big', hardware: { disk_size: 51 } }), 428, 'desktop_new_disk_size_quota_exceeded');
    await expectCode(await create(nora, { name: 'Odd mem', hardware: { memory: 1.25 } }), 400, 'hardware_memory_step');
    await expectCode(await create(nora, { name: 'Bad net', hardware: { interfaces: ['bridge-x'] } }), 400, 'hardware_not_allowed');
    // The fallback bounds apply without any quota.
    await expectCode(await create(advanced, { name: 'Huge', hardware: { memory: 128.5 } }), 428, 'desktop_new_memory_quota_exceeded');
    const { body } = await json(await create(nora, { name: 'Within', hardware: { memory: 2, vcpus: 2, disk_size: 50 } }));
    expect((await row(body.id)).hardware).toMatchObject({ memoryMb: 2048, vcpus: 2 });
  });

  it('refuses one more desktop than the quota, and over group and category limits', async () => {
    // Nora (quota 3 desktops) has the demo one, "Plain one" and "Within".
    await expectCode(await create(nora, { name: 'Fourth' }), 428, 'desktop_new_user_quota_exceeded');
    await expectCode(await call(server, '/api/v3/desktop/new/check_quota', { token: nora }), 428, 'desktop_new_user_quota_exceeded');
    expect(await (await call(server, '/api/v3/desktop/new/check_quota', { token: iker })).json()).toEqual({});

    const limits = (desktops: number) => ({
      desktops, volatile: 99, templates: 99, isos: 99, deployments_total: 99, deployment_desktops: 99, started_deployment_desktops: 99,
      running: 99, memory: 99, vcpus: 99, desktops_disk_size: 99, total_size: 999, total_soft_size: 999, storage_size: 999, media_size: 999,
      personal_drive: 0, users: 99,
    });
    // Students 1B hold 5 desktops (Nora 3, Iker 2).
    await server.ctx.db.update(schema.groups).set({ limits: limits(5) }).where(eq(schema.groups.id, 'default-students-1b'));
    await expectCode(await create(iker, { name: 'Over group' }), 428, 'desktop_new_group_limit_exceeded');
    await server.ctx.db.update(schema.groups).set({ limits: null }).where(eq(schema.groups.id, 'default-students-1b'));
    await server.ctx.db.update(schema.categories).set({ limits: limits(5) }).where(eq(schema.categories.id, 'default'));
    await expectCode(await create(iker, { name: 'Over category' }), 428, 'desktop_new_category_limit_exceeded');
    await server.ctx.db.update(schema.categories).set({ limits: null }).where(eq(schema.categories.id, 'default'));
  });

  it('refuses templates that are not shared with the user, disabled, or unknown', async () => {
    const [admin] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'admin'));
    const privateId = crypto.randomUUID();
    const [t] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, demoTemplate));
    await server.ctx.db.insert(schema.domains).values({ ...t!, id: privateId, name: 'Private', userId: admin!.id, allowed: { roles: false, categories: false, groups: false, users: false }, createdAt: new Date() });
    const [link] = await server.ctx.db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, demoTemplate));
    await server.ctx.db.insert(schema.domainDisks).values({ domainId: privateId, storageId: link!.storageId, position: 0 });
    await expectCode(await create(iker, { name: 'Not mine', template_id: privateId }), 403, 'template_not_allowed');
    await server.ctx.db.update(schema.domains).set({ allowed: { roles: false, categories: false, groups: ['default-students-1b'], users: false } }).where(eq(schema.domains.id, privateId));
    expect((await create(iker, { name: 'Shared now', template_id: privateId })).status).toBe(200);
    await expectCode(await create(sara, { name: 'Other group', template_id: privateId }), 403, 'template_not_allowed');
    await server.ctx.db.update(schema.domains).set({ enabled: false }).where(eq(schema.domains.id, privateId));
    await expectCode(await create(iker, { name: 'Disabled', template_id: privateId }), 403, 'template_not_allowed');
    await expectCode(await create(iker, { name: 'Nothing', template_id: 'no-such-template' }), 404, 'template_not_found');
  });

  it('applies the viewer rules: RDP brings wireguard, at least one viewer', async () => {
    const { body } = await json(await create(advanced, { name: 'Remote one', guest_properties: { viewers: { browser_rdp: {}, browser_vnc: {} } } }));
    const d = await row(body.id);
    expect(d.hardware.interfaces.map((i) => i.id)).toEqual(['default', 'wireguard']);
    await expectCode(await create(advanced, { name: 'No viewer', guest_properties: { viewers: {} } }), 400, 'one_viewer_minimum');
    // Without a GPU, "only GPU" is not kept: video goes back to default.
    const { body: b2 } = await json(await create(advanced, { name: 'No gpu', hardware: { videos: ['none'] }, guest_properties: { viewers: { browser_rdp: {} } } }));
    expect((await row(b2.id)).hardware.videos).toEqual(['default']);
  });
});

describe('editing a desktop', () => {
  let id: string;
  beforeAll(async () => {
    id = (await json(await create(advanced, { name: 'Editable' }))).body.id;
  });

  it('changes name, description, hardware and viewers of a stopped desktop', async () => {
    const r = await edit(advanced, id, {
      name: 'Edited desktop',
      description: 'now with more memory',
      hardware: { vcpus: 4, memory: 3, disk_bus: 'ide', boot_order: ['iso', 'disk'], install: 'win10Virtio' },
      guest_properties: { viewers: { file_spice: {} }, credentials: { username: 'me', password: 'plain' }, fullscreen: true },
    });
    const { body } = await json(r);
    expect(r.status).toBe(200);
    expect(body).toMatchObject({ name: 'Edited desktop', description: 'now with more memory' });
    expect(body.hardware).toMatchObject({ vcpus: 4, memory: 3, disk_bus: 'ide', boot_order: ['iso', 'disk'], install: 'win10Virtio' });
    expect(body.guest_properties).toEqual({ viewers: { file_spice: { options: null } }, credentials: { username: 'me', password: 'plain' }, fullscreen: true });
    const list = await (await call(server, '/api/v3/user/desktops', { token: advanced })).json();
    expect(list.find((d: { id: string }) => d.id === id)).toMatchObject({ name: 'Edited desktop', vcpus: 4, memory: 3, viewers: ['file-spice'] });
  });

  it('refuses a running desktop, a server, and names or hardware out of bounds', async () => {
    await setStatus(id, 'Started');
    await expectCode(await edit(advanced, id, { description: 'x' }), 409, 'domain_not_stopped');
    await setStatus(id, 'Stopped');
    await server.ctx.db.update(schema.domains).set({ server: true }).where(eq(schema.domains.id, id));
    await expectCode(await edit(advanced, id, { description: 'x' }), 409, 'desktop_is_server');
    expect((await infoOf(advanced, id)).editable).toBe(false);
    await server.ctx.db.update(schema.domains).set({ server: false }).where(eq(schema.domains.id, id));
    await expectCode(await edit(advanced, id, { name: 'lab, v1.0_A-B' }), 409, 'new_desktop_name_exists');
    await expectCode(await edit(advanced, id, { name: 'no' }), 400, 'validation_error');
    await expectCode(await edit(advanced, id, { hardware: { memory: 129 } }), 428, 'domain_edit_memory_quota_exceeded');
    await expectCode(await edit(advanced, id, { hardware: { vcpus: 129 } }), 428, 'domain_edit_vcpu_quota_exceeded');
    await expectCode(await edit(advanced, id, { hardware: { memory: 2.2 } }), 400, 'hardware_memory_step');
    await expectCode(await edit(advanced, id, { guest_properties: { viewers: {} } }), 400, 'one_viewer_minimum');
  });

  it('keeps to the owner\'s quota, and lets only owner, admin and category manager edit', async () => {
    const mine = (await json(await create(sara, { name: 'Sara edits' }))).body.id;
    await expectCode(await edit(sara, mine, { hardware: { memory: 2.5 } }), 428, 'domain_edit_memory_quota_exceeded');
    expect((await edit(sara, mine, { hardware: { memory: 2 } })).status).toBe(200);
    await expectCode(await edit(iker, mine, { description: 'not yours' }), 403, 'forbidden');
    await expectCode(await call(server, `/api/v3/domain/info/${mine}`, { token: iker }), 403, 'forbidden');
    expect((await edit(manager, mine, { description: 'the manager was here' })).status).toBe(200);
    await expectCode(await call(server, '/api/v3/domain/info/nope', { token: sara }), 404, 'desktop_not_found');
  });

  it('adds wireguard with the RDP viewers; removing it removes them and restores the default credentials', async () => {
    let body = (await json(await edit(advanced, id, { guest_properties: { viewers: { file_spice: {}, browser_rdp: {}, file_rdpgw: {} } } }))).body;
    expect(body.hardware.interfaces.map((i: { id: string }) => i.id)).toEqual(['default', 'wireguard']);
    body = (await json(await edit(advanced, id, { hardware: { interfaces: ['default'] } }))).body;
    expect(Object.keys(body.guest_properties.viewers)).toEqual(['file_spice']);
    expect(body.guest_properties.credentials).toEqual({ username: 'isard', password: 'pirineus' });
    expect(body.hardware.interfaces.map((i: { id: string }) => i.id)).toEqual(['default']);
    // Only RDP viewers, then wireguard removed: nothing left to view with.
    await edit(advanced, id, { guest_properties: { viewers: { browser_rdp: {} } } });
    await expectCode(await edit(advanced, id, { hardware: { interfaces: ['default'] } }), 400, 'one_viewer_minimum');
  });

  it('GPU: a profile or none (only while stopped); "only GPU" only with RDP; no GPU means the default video', async () => {
    const res = (vgpus: string[] | null) => call(server, `/api/v3/domain/reservables/${id}`, { token: advanced, method: 'PUT', body: { vgpus } });
    await expectCode(await res(['NO-SUCH-GPU']), 400, 'reservable_not_found');
    await setStatus(id, 'Started');
    await expectCode(await res(['NVIDIA-A40-2Q']), 409, 'domain_not_stopped');
    await setStatus(id, 'Stopped');
    expect((await json(await res(['NVIDIA-A40-2Q']))).body.reservables).toEqual({ vgpus: ['NVIDIA-A40-2Q'] });
    await edit(advanced, id, { guest_properties: { viewers: { browser_vnc: {}, browser_rdp: {} } } });
    await expectCode(await edit(advanced, id, { hardware: { videos: ['none'] } }), 400, 'only_works_rdp');
    const gpuOnly = await json(await edit(advanced, id, { hardware: { videos: ['none'] }, guest_properties: { viewers: { browser_rdp: {}, file_rdpvpn: {} } } }));
    expect(gpuOnly.body.hardware.videos).toEqual(['none']);
    const list = await (await call(server, '/api/v3/user/desktops', { token: advanced })).json();
    expect(list.find((d: { id: string }) => d.id === id).needs_booking).toBe(true);
    const none = await json(await res(null));
    expect(none.body.reservables).toEqual({ vgpus: null });
    expect(none.body.hardware.videos).toEqual(['default']);
  });

  it('sets a stock cover or an uploaded one (≤ 1 MB, a real image), served to the web', async () => {
    await expectCode(await edit(advanced, id, { image: { type: 'stock', id: '77.svg' } }), 400, 'bad_request');
    const stock = await json(await edit(advanced, id, { image: { type: 'stock', id: '3.svg' } }));
    expect(stock.body.image).toEqual({ id: '3.svg', type: 'stock', url: '/assets/img/desktops/stock/3.svg' });

    // A 1×1 PNG.
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const up = await json(await edit(advanced, id, { image: { type: 'user', file: { filename: 'cover.png', data: `data:image/png;base64,${png}` } } }));
    expect(up.status).toBe(200);
    expect(up.body.image.type).toBe('user');
    expect(up.body.image.url).toMatch(/^\/assets\/img\/desktops\/user\/[\w-]+\.png$/);
    const served = await fetch(`${server.url}${up.body.image.url}`);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(png, 'base64'))).toBe(true);
    const images = await (await call(server, `/api/v3/images/desktops?desktop_id=${id}`, { token: advanced })).json();
    expect(images[0]).toMatchObject({ type: 'user', url: up.body.image.url });

    // Replacing it removes the old file.
    const file = `${server.config.dataDir}/images/desktops/${up.body.image.id}`;
    expect(existsSync(file)).toBe(true);
    await edit(advanced, id, { image: { type: 'stock', id: '4.svg' } });
    expect(existsSync(file)).toBe(false);

    const big = Buffer.alloc(1024 * 1024 + 1, 0);
    Buffer.from(png, 'base64').copy(big);
    await expectCode(await edit(advanced, id, { image: { type: 'user', file: { filename: 'big.png', data: big.toString('base64') } } }), 400, 'image_too_large');
    await expectCode(await edit(advanced, id, { image: { type: 'user', file: { filename: 'x.png', data: Buffer.from('<svg onload=alert(1)>').toString('base64') } } }), 400, 'image_bad_format');
  });

  it('recreates the disk of a stopped desktop: a fresh overlay on the template, the old one removed', async () => {
    const [oldLink] = await server.ctx.db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, id));
    const [oldDisk] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, oldLink!.storageId));
    await setStatus(id, 'Started');
    await expectCode(await call(server, `/api/v3/domain/${id}/recreate_disk`, { token: advanced, method: 'POST', body: {} }), 409, 'domain_not_stopped');
    await setStatus(id, 'Stopped');
    expect((await call(server, `/api/v3/domain/${id}/recreate_disk`, { token: advanced, method: 'POST', body: {} })).status).toBe(200);
    const [link] = await server.ctx.db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, id));
    expect(link!.storageId).not.toBe(oldLink!.storageId);
    const [disk] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, link!.storageId));
    expect(disk!.parentId).toBe(oldDisk!.parentId);
    expect((await info(disk!.path)).backingFile).toBe(
      (await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, oldDisk!.parentId!)))[0]!.path,
    );
    expect(existsSync(oldDisk!.path)).toBe(false);
    expect(await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, oldDisk!.id))).toEqual([]);
    expect((await row(id)).status).toBe('Stopped');
  });

  it('reports hardware beyond the owner\'s quota as limited', async () => {
    const saraId = await userIdOf(server, 'student01');
    const [d] = await server.ctx.db
      .select()
      .from(schema.domains)
      .where(and(eq(schema.domains.userId, saraId), eq(schema.domains.name, 'Sara edits')));
    await server.ctx.db.update(schema.domains).set({ hardware: { ...d!.hardware, vcpus: 8 } }).where(eq(schema.domains.id, d!.id));
    expect((await infoOf(sara, d!.id)).limited_hardware).toBe(true);
    // Unchanged values pass; a change must fit.
    expect((await edit(sara, d!.id, { description: 'still 8 vCPUs' })).status).toBe(200);
    await expectCode(await edit(sara, d!.id, { hardware: { vcpus: 6 } }), 428, 'domain_edit_vcpu_quota_exceeded');
  });
});
