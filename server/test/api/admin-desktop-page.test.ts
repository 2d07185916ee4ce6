import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { ZAdminActionAnswer, ZAdminDesktopDetail, ZDesktopHistory, type TDesktopHistory } from '@vdi/contracts';
import { schema } from '../../src/db';
import type { UserRow } from '../../src/auth/sessions';
import { call, type TestServer, startTestServer } from '../helpers/server';
import { makeDesktop, tokenOf, userRow } from '../helpers/routes-fixtures';
import { until } from '../helpers/wait';
import { scaled } from '../helpers/slowdown';

// The console's page of one desktop (issue 28): its facts, its history from what the lifecycle
// recorded at each cause, its screen while it runs; per-object reach (a manager of another category: not found).

const A = '/api/v3/admin';
let server: TestServer;
let admin: string;
let manager: string;
let labManager: string;
let advanced: string;
let owner: UserRow;

const send = (token: string, path: string, opts: { method?: string; body?: unknown } = {}) => call(server, path, { token, ...opts });
const history = async (id: string): Promise<TDesktopHistory> => {
  const res = await send(admin, `${A}/desktops/${id}/history`);
  expect(res.status).toBe(200);
  return ZDesktopHistory.parse(await res.json());
};
const statusOf = async (id: string) => (await server.ctx.db.select({ s: schema.domains.status }).from(schema.domains).where(eq(schema.domains.id, id)))[0]?.s;
const act = async (action: string, id: string) => {
  const res = await send(admin, `${A}/desktops/${action}`, { method: 'POST', body: { ids: [id] } });
  expect(res.status).toBe(200);
  return ZAdminActionAnswer.parse(await res.json());
};

beforeAll(async () => {
  server = await startTestServer();
  const base = await userRow(server, 'student01');
  await server.ctx.db.insert(schema.users).values({ ...base, id: randomUUID(), uid: 'labmanager', username: 'labmanager', name: 'Lab manager', email: '', categoryId: 'lab', groupId: 'lab-default', roleId: 'manager' });
  [admin, manager, labManager, advanced] = await Promise.all([tokenOf(server, 'admin', 'default'), tokenOf(server, 'manager', 'default'), tokenOf(server, 'labmanager', 'lab'), tokenOf(server, 'advanced', 'default')]);
  owner = await userRow(server, 'user');
}, scaled(120_000));
afterAll(async () => server?.close());

describe('GET /admin/desktops/{id}, /history, /screenshot', () => {
  it('answer the facts to admins and the category\'s managers; another category\'s manager is told not found, a teacher forbidden, bad input 400', async () => {
    const d = await makeDesktop(server, owner, { name: 'Page facts' });
    for (const who of [admin, manager]) {
      const res = await send(who, `${A}/desktops/${d.id}`);
      expect(res.status).toBe(200);
      const body = ZAdminDesktopDetail.parse(await res.json());
      expect(body).toMatchObject({ id: d.id, name: 'Page facts', username: 'user', category: 'default', status: 'Stopped', hypervisor: null, started: null });
      expect(body.template_name).toBeTruthy();
      expect(body.group_name).toBeTruthy();
      expect(body.memory_mb).toBeGreaterThan(0);
      expect(body.disks).toHaveLength(1);
      expect(body.disks[0]!.size).toBeGreaterThan(0);
      expect(body.hardware.boot_order).toContain('disk');
    }
    for (const path of [`${A}/desktops/${d.id}`, `${A}/desktops/${d.id}/history`, `${A}/desktops/${d.id}/screenshot`]) {
      const other = await send(labManager, path);
      expect(other.status).toBe(404);
      expect((await other.json()).description_code).toBe('desktop_not_found');
      expect((await send(advanced, path)).status).toBe(403);
    }
    const bad = await send(admin, `${A}/desktops/${'x'.repeat(65)}/history`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).description_code).toBeTruthy();
    // Not running: no screen.
    expect((await send(admin, `${A}/desktops/${d.id}/screenshot`)).status).toBe(404);
    const h = await history(d.id);
    expect(h.items.map((x) => x.kind)).toEqual(['created']);
  });

  it('a start and a stop: who asked, the host, the screen while it runs, how long it ran', async () => {
    const d = await makeDesktop(server, owner, { name: 'Page lifecycle' });
    expect((await act('start', d.id)).done).toBe(1);
    await until('the desktop runs', async () => (await statusOf(d.id)) === 'Started', 60_000);
    const png = await until('a screenshot', async () => {
      const res = await send(manager, `${A}/desktops/${d.id}/screenshot`);
      return res.status === 200 ? res : undefined;
    }, 30_000);
    expect(png.headers.get('content-type')).toBe('image/png');
    const detail = ZAdminDesktopDetail.parse(await (await send(admin, `${A}/desktops/${d.id}`)).json());
    expect(detail.hypervisor).toBeTruthy();
    expect(detail.started).toBeTruthy();

    expect((await act('force_stop', d.id)).done).toBe(1);
    await until('the desktop stopped', async () => (await statusOf(d.id)) === 'Stopped', 30_000);
    const h = await until('the stop recorded', async () => {
      const x = await history(d.id);
      return x.items.some((i) => i.kind === 'stopped') ? x : undefined;
    });
    const kinds = h.items.map((x) => x.kind);
    expect(kinds).toEqual(['stopped', 'force_stop', 'started', 'start', 'created']);
    const byKind = Object.fromEntries(h.items.map((x) => [x.kind, x]));
    expect(byKind.start).toMatchObject({ actor: 'admin' });
    expect(byKind.started!.hypervisor).toBe(detail.hypervisor);
    expect(byKind.force_stop).toMatchObject({ actor: 'admin' });
    expect(byKind.stopped!.seconds).toBeGreaterThanOrEqual(0);
    expect(h.summary).toMatchObject({ starts: 1, failures: 0 });
  });

  it('a start that fails: the failure and its reason in the history', async () => {
    const d = await makeDesktop(server, owner, { name: 'Page failure' });
    // Its disk is no longer an image QEMU can open (a real failure of the machine's start).
    const [disk] = await server.ctx.db
      .select({ path: schema.storage.path })
      .from(schema.domainDisks)
      .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId))
      .where(eq(schema.domainDisks.domainId, d.id));
    await writeFile(disk!.path, 'not a disk image\n');
    expect((await act('start', d.id)).done).toBe(1);
    await until('the start failed', async () => (await statusOf(d.id)) === 'Failed', 60_000);
    const h = await until('the failure recorded', async () => {
      const x = await history(d.id);
      return x.items.some((i) => i.kind === 'start_failed') ? x : undefined;
    });
    const failed = h.items.find((x) => x.kind === 'start_failed')!;
    expect(failed.reason).toBeTruthy();
    const [row] = await server.ctx.db.select({ why: schema.domains.currentAction }).from(schema.domains).where(eq(schema.domains.id, d.id));
    expect(failed.reason).toBe(row!.why);
    expect(h.summary.failures).toBe(1);
  });

  it('PUT /admin/desktops/{id}: a stopped desktop given to another person of the category, with its disk, audited; refusals', async () => {
    const d = await makeDesktop(server, owner, { name: 'Page move' });
    const to = await userRow(server, 'student02');
    const lab = await userRow(server, 'labmanager', 'lab');
    // Someone out of a manager's reach is not found; a running desktop and a deployment's are refused.
    const far = await send(manager, `${A}/desktops/${d.id}`, { method: 'PUT', body: { owner_id: lab.id } });
    expect(far.status).toBe(404);
    expect((await far.json()).description_code).toBe('user_not_found');
    const bad = await send(manager, `${A}/desktops/${d.id}`, { method: 'PUT', body: { owner_id: to.id, extra: 1 } });
    expect(bad.status).toBe(400);
    await server.ctx.db.update(schema.domains).set({ status: 'Started' }).where(eq(schema.domains.id, d.id));
    const running = await send(manager, `${A}/desktops/${d.id}`, { method: 'PUT', body: { owner_id: to.id } });
    expect(running.status).toBe(409);
    expect((await running.json()).description_code).toBe('desktop_action_not_available');
    await server.ctx.db.update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, d.id));

    const res = await send(manager, `${A}/desktops/${d.id}`, { method: 'PUT', body: { owner_id: to.id } });
    expect(res.status).toBe(200);
    expect(ZAdminDesktopDetail.parse(await res.json())).toMatchObject({ user: to.id, username: 'student02', group: to.groupId });
    const [disk] = await server.ctx.db
      .select({ userId: schema.storage.userId })
      .from(schema.domainDisks)
      .innerJoin(schema.storage, eq(schema.storage.id, schema.domainDisks.storageId))
      .where(eq(schema.domainDisks.domainId, d.id));
    expect(disk!.userId).toBe(to.id);
    const h = await history(d.id);
    expect(h.items.find((x) => x.kind === 'audit')).toMatchObject({ action: 'desktop.change_owner', actor: 'manager' });
  });

  it('pages the history: the newest 200, then older ones by the page\'s cursor until the creation, each line once; sums of the whole history; a bad cursor 400', async () => {
    const d = await makeDesktop(server, owner, { name: 'Page paging' });
    // After its creation (the history's last line).
    const t0 = Date.now() + 60_000;
    // 450 events and 30 audit entries: some in the same microsecond, across the pages' edges.
    const events = Array.from({ length: 450 }, (_, i) => ({
      desktopId: d.id,
      at: new Date(t0 + Math.floor(i / 3) * 1000),
      kind: i % 3 === 0 ? 'started' : i % 3 === 1 ? 'viewer' : 'stopped',
      detail: i % 3 === 1 ? { protocol: i % 2 ? 'browser-vnc' : 'file-spice' } : i % 3 === 2 ? { seconds: 10 } : {},
    }));
    await server.ctx.db.insert(schema.desktopEvents).values(events);
    await server.ctx.db.insert(schema.auditLog).values(
      Array.from({ length: 30 }, (_, i) => ({ at: new Date(t0 + i * 5000), actorName: 'admin', action: 'desktop.update', objectType: 'desktop', objectId: d.id, objectName: d.name })),
    );
    const seen: TDesktopHistory['items'] = [];
    let cursor: string | null = null;
    let pages = 0;
    let first: TDesktopHistory | null = null;
    do {
      const res = await send(admin, `${A}/desktops/${d.id}/history${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      const page = ZDesktopHistory.parse(await res.json());
      first ??= page;
      expect(page.items.length).toBeLessThanOrEqual(200);
      seen.push(...page.items);
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(first!.items).toHaveLength(200);
    // Every line once: 450 events, 30 audit entries, the creation last; newest first across the pages.
    expect(seen).toHaveLength(481);
    expect(seen.filter((x) => x.kind === 'audit')).toHaveLength(30);
    expect(seen.at(-1)!.kind).toBe('created');
    const times = seen.slice(0, -1).map((x) => Date.parse(x.at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // The sums are the whole history's, on every page.
    expect(first!.summary).toEqual({ starts: 150, failures: 0, seconds: 1500, viewers: { 'browser-vnc': 75, 'file-spice': 75 } });

    for (const bad of ['not a cursor', 'bm90LWEtY3Vyc29y', Buffer.from('1~x~2').toString('base64url'), Buffer.from(`${'9'.repeat(19)}~e~1`).toString('base64url')]) {
      const res = await send(admin, `${A}/desktops/${d.id}/history?cursor=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect((await res.json()).description_code).toBe('desktop_history_cursor_invalid');
    }
    const unknown = await send(admin, `${A}/desktops/${d.id}/history?page=2`);
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).description_code).toBeTruthy();
    // The cursor does not reach past the caller's reach: another category's manager is still told not found.
    const res = await send(labManager, `${A}/desktops/${d.id}/history?cursor=${encodeURIComponent(first!.next_cursor!)}`);
    expect(res.status).toBe(404);
  });
});
