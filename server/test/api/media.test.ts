import { scaled } from '../helpers/slowdown';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { io, type Socket } from 'socket.io-client';
import type { TMedia, TQuota } from '@vdi/contracts';
import { schema } from '../../src/db';
import { info } from '../../src/engine/disks';
import { startMediaFileServer, type MediaFileServer } from '../helpers/media-file-server';
import { call, login, loginToken, DEMO_PASSWORD, startTestServer, testImagesDir, userIdOf, type TestServer } from '../helpers/server';

let server: TestServer;
let files: MediaFileServer;
let teo: string; // `advanced`, the owner of the media below
let researcher: string; // advanced too, another category
let manager: string;
let uma: string; // role user: no media at all

const READY = /DEMO-DESKTOP READY ip=(\S+) boot=(\d+|no disk)/;

beforeAll(async () => {
  // The server first: it builds the demo guest (and its ISO) when missing.
  server = await startTestServer({ env: { MEDIA_ALLOW_PRIVATE_URLS: '1' }, startConcurrency: 1 });
  files = await startMediaFileServer(join(testImagesDir(), 'demo.iso'));
  teo = await loginToken(server, 'advanced');
  manager = await loginToken(server, 'manager');
  uma = await loginToken(server, 'user');
  const r = await login(server, 'researcher', DEMO_PASSWORD, 'lab');
  researcher = r.token!;
}, scaled(240_000));
afterAll(async () => {
  await server?.close();
  await files?.close();
});

const mediaList = async (token: string, path = '/api/v3/media'): Promise<TMedia[]> => (await call(server, path, { token })).json();
const create = (token: string, body: Record<string, unknown>) => call(server, '/api/v3/media', { token, body: { kind: 'iso', description: '', ...body } });
const mediaRow = async (id: string) => (await server.ctx.db.select().from(schema.media).where(eq(schema.media.id, id)))[0]!;
async function waitStatus(id: string, statuses: string[], timeoutMs = 30_000) {
  const until = Date.now() + scaled(timeoutMs);
  for (;;) {
    const row = await mediaRow(id);
    if (statuses.includes(row.status)) return row;
    if (Date.now() > until) throw new Error(`media ${id} is ${row.status}, not ${statuses.join('|')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
async function createOk(token: string, body: Record<string, unknown>): Promise<string> {
  const r = await create(token, body);
  expect(r.status, await r.clone().text()).toBe(200);
  return ((await r.json()) as { id: string }).id;
}
const listen = (token: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = io(`${server.url}/userspace`, { path: '/api/v3/socket.io', transports: ['websocket'], auth: { jwt: token }, reconnection: false });
    s.on('connect', () => resolve(s));
    s.on('connect_error', reject);
  });
const setQuota = async (username: string, q: Partial<TQuota> | null) => {
  const base: TQuota = {
    desktops: 10, volatile: 5, templates: 5, isos: 5, deployments_total: 5, deployment_desktops: 50, started_deployment_desktops: 20,
    running: 3, memory: 8, vcpus: 8, desktops_disk_size: 50, total_size: 100, total_soft_size: 80, storage_size: 100, media_size: 50, personal_drive: 0,
  };
  await server.ctx.db.update(schema.users).set({ quota: q ? { ...base, ...q } : null }).where(eq(schema.users.username, username));
};
const codeOf = async (r: Response) => ((await r.json()) as { description_code: string }).description_code;
const mediaDir = () => join(server.config.dataDir, 'storage', 'media');

describe('media', () => {
  it('is for admin, manager and advanced only', async () => {
    for (const path of ['/api/v3/media', '/api/v3/media_allowed']) {
      const r = await call(server, path, { token: uma });
      expect(r.status).toBe(403);
    }
    expect((await create(uma, { name: 'x', url: `${files.base}/demo.iso` })).status).toBe(403);
    expect((await call(server, '/api/v3/media', { token: teo })).status).toBe(200);
    expect(await mediaList(teo)).toEqual([]);
  });

  it('refuses bad addresses with the catalogue codes, before storing anything', async () => {
    for (const url of ['ftp://example.org/x.iso', 'not an address', 'file:///etc/passwd', 'https://user:pw@example.org/x.iso']) {
      const r = await create(teo, { name: 'Bad', url });
      expect(r.status, url).toBe(400);
      expect(await codeOf(r), url).toBe('media_url_bad_format');
    }
    const missing = await create(teo, { name: 'Missing', url: `${files.base}/nothing-here.iso` });
    expect(missing.status).toBe(404);
    expect(await codeOf(missing)).toBe('media_url_not_found');
    // Nothing listens there.
    const closed = await create(teo, { name: 'Closed', url: 'http://127.0.0.1:9/x.iso' });
    expect(await codeOf(closed)).toBe('media_url_not_found');
    const unknownHost = await create(teo, { name: 'Nohost', url: 'https://no-such-host.invalid/x.iso' });
    expect(await codeOf(unknownHost)).toBe('media_url_not_found');
    expect((await create(teo, { name: 'x'.repeat(51), url: `${files.base}/demo.iso` })).status).toBe(400);
    expect((await create(teo, { name: 'Kind', url: `${files.base}/demo.iso`, kind: 'dvd' })).status).toBe(400);
    expect(await server.ctx.db.select().from(schema.media)).toEqual([]);
  });

  it('without MEDIA_ALLOW_PRIVATE_URLS: https only, and never to internal addresses', async () => {
    server.ctx.config.mediaAllowPrivateUrls = false;
    const before = files.requests.length;
    try {
      const http = await create(teo, { name: 'Http', url: `${files.base}/demo.iso` });
      expect(await codeOf(http)).toBe('media_url_bad_format');
      const port = new URL(files.base).port;
      for (const host of ['127.0.0.1', 'localhost', '[::1]', '10.0.0.1', '169.254.169.254', '[::ffff:127.0.0.1]', '0.0.0.0', '[fd00::1]', '2130706433']) {
        const r = await create(teo, { name: 'Internal', url: `https://${host}:${port}/demo.iso` });
        expect(r.status, host).toBe(400);
        expect(await codeOf(r), host).toBe('media_url_not_valid');
      }
      // Refused before any connection.
      expect(files.requests.slice(before)).toEqual([]);
    } finally {
      server.ctx.config.mediaAllowPrivateUrls = true;
    }
  });

  let isoId: string;
  it('downloads an ISO as a job: DownloadStarting → Downloading with live progress → Downloaded', async () => {
    files.rate.bytesPerSecond = 6 * 1024 * 1024; // about 2 s for the 13 MB demo ISO
    const socket = await listen(teo);
    const events: { event: string; m: TMedia }[] = [];
    for (const event of ['media_add', 'media_update']) socket.on(event, (raw: string) => events.push({ event, m: JSON.parse(raw) }));
    try {
      isoId = await createOk(teo, { name: 'Demo ISO', url: `${files.base}/throttled.iso`, description: 'The demo guest on a CD' });
      await waitStatus(isoId, ['Downloaded']);
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      socket.close();
    }
    expect(events[0]).toMatchObject({ event: 'media_add', m: { id: isoId, status: 'DownloadStarting', editable: true, kind: 'iso' } });
    const progress = events.filter((e) => e.m.status === 'Downloading' && e.m.progress && e.m.progress.received_bytes > 0).map((e) => e.m.progress!);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    const mid = progress.find((p) => p.total_percent > 0 && p.total_percent < 100)!;
    expect(mid.total_bytes).toBe(files.iso.length);
    expect(mid.speed_bytes_per_second).toBeGreaterThan(0);
    expect(mid.time_left_seconds).toBeGreaterThanOrEqual(0);
    // Throttled to about two a second.
    expect(progress.length).toBeLessThan(12);
    const last = events.at(-1)!;
    expect(last.m).toMatchObject({ status: 'Downloaded', size: files.iso.length, progress: { total_percent: 100, received_bytes: files.iso.length } });

    const [listed] = await mediaList(teo);
    expect(listed).toMatchObject({
      id: isoId, name: 'Demo ISO', description: 'The demo guest on a CD', status: 'Downloaded', kind: 'iso', type: 'iso',
      url: `${files.base}/throttled.iso`, editable: true, user_name: 'Teo Teacher', group_name: 'Teachers', category_name: 'Default',
      allowed: { roles: false, categories: false, groups: false, users: false },
    });
    const file = join(mediaDir(), `${isoId}.iso`);
    expect(createHash('sha256').update(readFileSync(file)).digest('hex')).toBe(files.isoSha256);
    expect(readdirSync(mediaDir()).filter((f) => f.endsWith('.part'))).toEqual([]);
    const [job] = await server.ctx.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, isoId));
    expect(job).toMatchObject({ kind: 'media_download', status: 'done', progress: 100 });
    // It counts in the profile's usage.
    const me = await (await call(server, '/api/v3/user', { token: teo })).json();
    expect(me.used.isos).toBe(1);
    expect(me.used.media_size).toBeCloseTo(files.iso.length / 1024 ** 3, 2);
  });

  it('follows redirects (checking each hop), and asks for one byte when HEAD is refused', async () => {
    const a = await createOk(teo, { name: 'Redirected', url: `${files.base}/redirect` });
    const b = await createOk(teo, { name: 'No head', url: `${files.base}/no-head.iso` });
    expect((await waitStatus(a, ['Downloaded', 'DownloadFailed'])).status).toBe('Downloaded');
    expect((await waitStatus(b, ['Downloaded', 'DownloadFailed'])).status).toBe('Downloaded');
    expect((await mediaRow(b)).size).toBe(files.iso.length);
    for (const id of [a, b]) expect((await call(server, `/api/v3/media/${id}`, { token: teo, method: 'DELETE' })).status).toBe(200);
  });

  it('aborts a download mid-way (DownloadAborting → DownloadFailed), and downloads it again on retry', async () => {
    files.rate.bytesPerSecond = 256 * 1024;
    const id = await createOk(teo, { name: 'Slow ISO', url: `${files.base}/throttled.iso` });
    await waitStatus(id, ['Downloading']);
    const until = Date.now() + scaled(10_000);
    while (((await mediaRow(id)).progress?.received_bytes ?? 0) === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    // Only the owner (or a manager of the category, or an admin) may abort.
    const foreign = await call(server, `/api/v3/media/abort/${id}`, { token: researcher, body: {} });
    expect(foreign.status).toBe(403);
    const r = await call(server, `/api/v3/media/abort/${id}`, { token: teo, body: {} });
    expect(r.status).toBe(200);
    const failed = await waitStatus(id, ['DownloadFailed']);
    expect(failed.detail).toBe('download_aborted');
    expect(failed.progress!.received_bytes).toBeGreaterThan(0);
    expect(failed.progress!.received_bytes).toBeLessThan(files.iso.length);
    expect(readdirSync(mediaDir()).filter((f) => f.startsWith(id))).toEqual([]);
    // Aborting again is not offered.
    expect(await codeOf(await call(server, `/api/v3/media/abort/${id}`, { token: teo, body: {} }))).toBe('media_action_not_available');
    // A failed media does not count in the quota.
    const me = await (await call(server, '/api/v3/user', { token: teo })).json();
    expect(me.used.isos).toBe(1);

    files.rate.bytesPerSecond = 16 * 1024 * 1024;
    expect((await call(server, `/api/v3/media/download/${id}`, { token: researcher, body: {} })).status).toBe(403);
    const retry = await call(server, `/api/v3/media/download/${id}`, { token: teo, body: {} });
    expect(retry.status).toBe(200);
    expect((await mediaRow(id)).status).toMatch(/ResetDownloading|Downloading|Downloaded/);
    expect((await waitStatus(id, ['Downloaded'])).size).toBe(files.iso.length);
    expect(await codeOf(await call(server, `/api/v3/media/download/${id}`, { token: teo, body: {} }))).toBe('media_action_not_available');
    expect((await call(server, `/api/v3/media/${id}`, { token: teo, method: 'DELETE' })).status).toBe(200);
  });

  it('deletes a media while it downloads: the download stops and nothing stays on disk', async () => {
    files.rate.bytesPerSecond = 256 * 1024;
    try {
      const id = await createOk(teo, { name: 'Gone soon', url: `${files.base}/throttled.iso` });
      await waitStatus(id, ['Downloading']);
      await new Promise((r) => setTimeout(r, 600));
      expect((await call(server, `/api/v3/media/${id}`, { token: teo, method: 'DELETE' })).status).toBe(200);
      // The answer comes once the download has stopped.
      expect(await server.ctx.jobs.activeFor(id)).toBeUndefined();
      expect((await mediaRow(id)).status).toBe('deleted');
      expect(readdirSync(mediaDir()).filter((f) => f.startsWith(id))).toEqual([]);
      await new Promise((r) => setTimeout(r, 300));
      expect((await mediaRow(id)).status).toBe('deleted');
    } finally {
      files.rate.bytesPerSecond = 16 * 1024 * 1024;
    }
  });

  it('checks the format of what arrived: not an ISO → DownloadFailedInvalidFormat; floppies by size or boot sector', async () => {
    const junk = await createOk(teo, { name: 'Not an ISO', url: `${files.base}/junk.iso` });
    const bad = await waitStatus(junk, ['DownloadFailedInvalidFormat', 'Downloaded', 'DownloadFailed']);
    expect(bad).toMatchObject({ status: 'DownloadFailedInvalidFormat', detail: 'media_invalid_format', path: null });
    expect(readdirSync(mediaDir()).filter((f) => f.startsWith(junk))).toEqual([]);
    const floppy = await createOk(teo, { name: 'Floppy', url: `${files.base}/floppy.img`, kind: 'floppy' });
    expect(await waitStatus(floppy, ['Downloaded', 'DownloadFailedInvalidFormat', 'DownloadFailed'])).toMatchObject({ status: 'Downloaded', size: 1_474_560 });
    expect(existsSync(join(mediaDir(), `${floppy}.img`))).toBe(true);
    const junkFloppy = await createOk(teo, { name: 'Junk floppy', url: `${files.base}/junk.iso`, kind: 'floppy' });
    expect((await waitStatus(junkFloppy, ['DownloadFailedInvalidFormat', 'Downloaded'])).status).toBe('DownloadFailedInvalidFormat');
    // Deleting failed and floppy media.
    for (const id of [junk, floppy, junkFloppy]) expect((await call(server, `/api/v3/media/${id}`, { token: teo, method: 'DELETE' })).status).toBe(200);
    expect((await mediaList(teo)).map((m) => m.id)).toEqual([isoId]);
  });

  it('refuses media over the quota and the group and category limits', async () => {
    files.rate.bytesPerSecond = 16 * 1024 * 1024;
    try {
      await setQuota('advanced', { isos: 1 });
      let r = await create(teo, { name: 'Second', url: `${files.base}/demo.iso` });
      expect(r.status).toBe(428);
      expect(await codeOf(r)).toBe('media_new_user_quota_exceeded');
      // 13 MB announced, 10 MB left.
      await setQuota('advanced', { isos: 5, total_size: 0.01 + files.iso.length / 1024 ** 3 });
      r = await create(teo, { name: 'Second', url: `${files.base}/demo.iso` });
      expect(await codeOf(r)).toBe('total_size_quota_exceeded');
      // Without a Content-Length the size is only known while it arrives: the download stops at the quota.
      const id = await createOk(teo, { name: 'Chunked', url: `${files.base}/chunked.iso` });
      expect(await waitStatus(id, ['DownloadFailed', 'Downloaded'])).toMatchObject({ status: 'DownloadFailed', detail: 'total_size_quota_exceeded' });
      expect((await call(server, `/api/v3/media/${id}`, { token: teo, method: 'DELETE' })).status).toBe(200);
      await setQuota('advanced', null);

      const limits = (q: Partial<TQuota>) => ({ ...(q as TQuota), users: 100 });
      await server.ctx.db.update(schema.groups).set({ limits: limits({ isos: 1, total_size: 100 }) }).where(eq(schema.groups.id, 'default-teachers'));
      expect(await codeOf(await create(teo, { name: 'Second', url: `${files.base}/demo.iso` }))).toBe('media_new_group_limit_exceeded');
      await server.ctx.db.update(schema.groups).set({ limits: limits({ isos: 10, total_size: 0.015 }) }).where(eq(schema.groups.id, 'default-teachers'));
      expect(await codeOf(await create(teo, { name: 'Second', url: `${files.base}/demo.iso` }))).toBe('group_total_size_limit_exceeded');
      await server.ctx.db.update(schema.groups).set({ limits: null }).where(eq(schema.groups.id, 'default-teachers'));
      await server.ctx.db.update(schema.categories).set({ limits: limits({ isos: 1, total_size: 100 }) }).where(eq(schema.categories.id, 'default'));
      expect(await codeOf(await create(teo, { name: 'Second', url: `${files.base}/demo.iso` }))).toBe('media_new_category_limit_exceeded');
      await server.ctx.db.update(schema.categories).set({ limits: limits({ isos: 10, total_size: 0.015 }) }).where(eq(schema.categories.id, 'default'));
      expect(await codeOf(await create(teo, { name: 'Second', url: `${files.base}/demo.iso` }))).toBe('category_total_size_limit_exceeded');
    } finally {
      await setQuota('advanced', null);
      await server.ctx.db.update(schema.groups).set({ limits: null }).where(eq(schema.groups.id, 'default-teachers'));
      await server.ctx.db.update(schema.categories).set({ limits: null }).where(eq(schema.categories.id, 'default'));
    }
  });

  it('keeps media private until shared; others may then use it but not manage it', async () => {
    const researcherId = await userIdOf(server, 'researcher');
    expect(await mediaList(researcher, '/api/v3/media_allowed')).toEqual([]);
    const body = { name: 'Not yours', media_id: isoId, kind: 'iso', disk_size: 1 };
    const refused = await call(server, '/api/v3/desktop/from/media', { token: researcher, body });
    expect(refused.status).toBe(403);
    for (const [method, path] of [['DELETE', `/api/v3/media/${isoId}`], ['GET', `/api/v3/media/desktops/${isoId}`]] as const) {
      expect((await call(server, path, { token: researcher, method })).status, path).toBe(403);
    }
    // A manager of the category manages it.
    const byManager = (await mediaList(manager, '/api/v3/media_allowed')).find((m) => m.id === isoId);
    expect(byManager).toMatchObject({ editable: true, user_name: 'Teo Teacher' });

    await server.ctx.db.update(schema.media).set({ allowed: { roles: false, categories: false, groups: false, users: [researcherId] } }).where(eq(schema.media.id, isoId));
    const shared = await mediaList(researcher, '/api/v3/media_allowed');
    expect(shared).toHaveLength(1);
    expect(shared[0]).toMatchObject({ id: isoId, editable: false, user_name: 'Teo Teacher', category_name: 'Default' });
    expect(await mediaList(researcher)).toEqual([]);
    // The owner does not see their own media as shared.
    expect(await mediaList(teo, '/api/v3/media_allowed')).toEqual([]);
    expect((await call(server, `/api/v3/media/${isoId}`, { token: researcher, method: 'DELETE' })).status).toBe(403);
    expect((await call(server, `/api/v3/media/abort/${isoId}`, { token: researcher, body: {} })).status).toBe(403);
    const made = await call(server, '/api/v3/desktop/from/media', { token: researcher, body: { ...body, name: 'From shared' } });
    expect(made.status, await made.clone().text()).toBe(200);
    const { id } = await made.json();
    expect((await (await call(server, '/api/v3/user/desktops', { token: researcher })).json()).map((d: { id: string }) => d.id)).toContain(id);
    expect((await call(server, `/api/v3/desktop/${id}`, { token: researcher, method: 'DELETE' })).status).toBe(200);
  });

  let desktopId: string;
  it('creates a desktop from media: empty disk of the chosen size, the ISO attached and booted first', async () => {
    const base = { media_id: isoId, kind: 'iso', disk_size: 2, hardware: { vcpus: 1, memory: 0.5 } };
    const post = (body: Record<string, unknown>, token = teo) => call(server, '/api/v3/desktop/from/media', { token, body });
    expect((await post({ ...base, name: 'abc' })).status).toBe(400); // 4 characters at least
    expect((await post({ ...base, name: 'Bad / name' })).status).toBe(400);
    expect((await post({ ...base, name: 'Half GB', hardware: { memory: 0.3 } })).status).toBe(400);
    expect(await codeOf(await post({ ...base, name: 'Wrong kind', kind: 'floppy' }))).toBe('bad_request');
    expect(await codeOf(await post({ ...base, name: 'No media', media_id: 'nope' }))).toBe('media_not_found');
    expect(await codeOf(await post({ ...base, name: 'Demo desktop' }))).toBe('new_desktop_name_exists');
    try {
      await setQuota('advanced', { desktops_disk_size: 1 });
      const r = await post({ ...base, name: 'Too big' });
      expect(r.status).toBe(428);
      expect(await codeOf(r)).toBe('desktop_new_disk_size_quota_exceeded');
      await setQuota('advanced', { vcpus: 1 });
      expect(await codeOf(await post({ ...base, name: 'Too many', hardware: { vcpus: 2 } }))).toBe('desktop_new_vcpu_quota_exceeded');
      await setQuota('advanced', { desktops: 1 });
      expect(await codeOf(await post({ ...base, name: 'One more' }))).toBe('desktop_new_user_quota_exceeded');
    } finally {
      await setQuota('advanced', null);
    }
    // Only Downloaded media.
    const failing = await createOk(teo, { name: 'Fails', url: `${files.base}/junk.iso` });
    await waitStatus(failing, ['DownloadFailedInvalidFormat']);
    expect(await codeOf(await post({ ...base, name: 'Not ready', media_id: failing }))).toBe('media_not_downloaded');
    await call(server, `/api/v3/media/${failing}`, { token: teo, method: 'DELETE' });

    const socket = await listen(teo);
    const added: string[] = [];
    socket.on('desktop_add', (raw: string) => added.push(JSON.parse(raw).name));
    const r = await post({ ...base, name: 'Installer', description: 'Boots the demo CD' });
    expect(r.status, await r.clone().text()).toBe(200);
    desktopId = (await r.json()).id;
    await new Promise((res) => setTimeout(res, 200));
    socket.close();
    expect(added).toEqual(['Installer']);

    const d = (await (await call(server, '/api/v3/user/desktops', { token: teo })).json()).find((x: { id: string }) => x.id === desktopId);
    expect(d).toMatchObject({ name: 'Installer', description: 'Boots the demo CD', state: 'Stopped', type: 'persistent', template: null, vcpus: 1, memory: 0.5 });
    const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktopId));
    expect(row!.hardware).toMatchObject({ bootOrder: ['iso', 'disk'], isos: [isoId], memoryMb: 512 });
    const [disk] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, d.storage[0]));
    const qcow = await info(disk!.path);
    expect(qcow).toMatchObject({ format: 'qcow2', virtualSize: 2 * 1024 ** 3, backingFile: null });
    expect(disk!.parentId).toBeNull();
    expect(await server.ctx.db.select().from(schema.domainMedia).where(eq(schema.domainMedia.domainId, desktopId))).toEqual([
      { domainId: desktopId, mediaId: isoId, kind: 'iso' },
    ]);
    const used = await (await call(server, `/api/v3/media/desktops/${isoId}`, { token: teo })).json();
    expect(used).toEqual([{ id: desktopId, name: 'Installer', kind: 'desktop', status: 'Stopped', user: await userIdOf(server, 'advanced'), user_name: 'Teo Teacher' }]);
  });

  it('boots it from the ISO on a CD-ROM; deleting the media is refused while it runs', async () => {
    const start = await call(server, `/api/v3/desktop/start/${desktopId}`, { token: teo });
    expect(start.status, await start.clone().text()).toBe(200);
    const { driver } = server.ctx.engine;
    const until = Date.now() + scaled(30_000);
    while ((await driver.status(desktopId)) !== 'running' && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    const machine = (await driver.list()).find((m) => m.id === desktopId)!;
    const argv = readFileSync(`/proc/${machine.pid}/cmdline`, 'latin1').split('\0');
    const isoPath = join(mediaDir(), `${isoId}.iso`);
    expect(argv).toContain(`if=none,id=cd0,file=${isoPath},format=raw,media=cdrom,readonly=on`);
    expect(argv.find((a) => a.startsWith('ide-cd,drive=cd0'))).toMatch(/bootindex=1$/);
    expect(argv.find((a) => a.startsWith('virtio-blk-pci,drive=disk0'))).toMatch(/bootindex=2$/);
    // The demo ISO boots to the same marker as the demo disk.
    const m = await driver.waitForSerial(desktopId, READY, scaled(90_000));
    expect(m[1]).toBeTruthy();

    const refused = await call(server, `/api/v3/media/${isoId}`, { token: teo, method: 'DELETE' });
    expect(refused.status).toBe(409);
    expect(await codeOf(refused)).toBe('media_in_use');
    await driver.destroy(desktopId);
    const stopped = Date.now() + scaled(20_000);
    for (;;) {
      const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktopId));
      if (row!.status === 'Stopped') break;
      if (Date.now() > stopped) throw new Error(`desktop stayed ${row!.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, scaled(150_000));

  it('deletes a media: lists the desktops first, detaches it from them, removes the file, tells the owner', async () => {
    const file = join(mediaDir(), `${isoId}.iso`);
    expect(statSync(file).size).toBe(files.iso.length);
    const socket = await listen(teo);
    const deleted: string[] = [];
    socket.on('media_delete', (raw: string) => deleted.push(JSON.parse(raw).id));
    const r = await call(server, `/api/v3/media/${isoId}`, { token: teo, method: 'DELETE' });
    expect(r.status, await r.clone().text()).toBe(200);
    await new Promise((res) => setTimeout(res, 200));
    socket.close();
    expect(deleted).toEqual([isoId]);
    expect(existsSync(file)).toBe(false);
    expect(await mediaList(teo)).toEqual([]);
    expect((await mediaRow(isoId)).status).toBe('deleted');
    expect((await call(server, `/api/v3/media/desktops/${isoId}`, { token: teo })).status).toBe(404);
    const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktopId));
    expect(row!.hardware).toMatchObject({ isos: [], bootOrder: ['disk'] });
    expect(await server.ctx.db.select().from(schema.domainMedia).where(eq(schema.domainMedia.mediaId, isoId))).toEqual([]);
    const me = await (await call(server, '/api/v3/user', { token: teo })).json();
    expect(me.used.isos).toBe(0);
  });
});
