import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { DESKTOP_FIELDS, formatBookingDate, LIST_TOTAL_HEADER, ZDeploymentDetail, ZDesktop, type TDesktop } from '@vdi/contracts';
import { schema } from '../../src/db';
import type { UserRow } from '../../src/auth/sessions';
import { userDesktops } from '../../src/modules/shared/desktop-view';
import { deploymentDesktopList, deploymentDesktopViews, desktopsOf } from '../../src/modules/deployments/view';
import { actorOf } from '../../src/auth/caller';
import { call, startTestServer, type TestServer } from '../helpers/server';
import { copyUser, demoTemplate, makeDeployment, makeDesktop, tokenOf, userRow } from '../helpers/routes-fixtures';
import { countQueries as countDbQueries } from '../helpers/query-count';

// GET /user/desktops of a person with hundreds of desktops: the same answer per desktop as
// before, in one query, with optional paging and field choice.

const COPIES = 300;
let server: TestServer;
let owner: UserRow;
let token: string;
let model: typeof schema.domains.$inferSelect;
let deploymentId: string;
const hour = 3600_000;
const bookingStart = new Date(Math.floor(Date.now() / hour + 2) * hour);

/** The queries `fn` itself runs (both drivers go through `query`; the server's background work is not counted). */
const countQueries = <T>(fn: () => Promise<T>) => countDbQueries(server.ctx.db, fn);

const list = async (query = '') => {
  const res = await call(server, `/api/v3/user/desktops${query}`, { token });
  return { res, body: (await res.json()) as unknown };
};

beforeAll(async () => {
  server = await startTestServer();
  const { db } = server.ctx;
  owner = await copyUser(server, { username: 'user' }, 'lister');
  token = await tokenOf(server, 'lister');
  model = await makeDesktop(server, owner, { name: 'Model desktop' });
  // A deployment gives `lister` a desktop with the student's right to recreate it.
  deploymentId = await makeDeployment(server, await tokenOf(server, 'advanced'), [owner.id]);
  const [disk] = await db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, model.id));
  // Hundreds more, as rows sharing the model's disk (cheap: no file made).
  const copies = Array.from({ length: COPIES }, (_, i) => ({ ...model, id: randomUUID(), name: `Copy ${String(i).padStart(3, '0')}` }));
  for (let i = 0; i < copies.length; i += 100) {
    const chunk = copies.slice(i, i + 100);
    await db.insert(schema.domains).values(chunk);
    await db.insert(schema.domainDisks).values(chunk.map((c) => ({ ...disk!, domainId: c.id })));
  }
  // One copy hidden by its deployment: not in its user's list.
  await db.update(schema.domains).set({ tag: deploymentId, tagVisible: false }).where(eq(schema.domains.id, copies[0]!.id));
  // The model's bookings: one over, the next one, a later one.
  const booking = (start: Date, end: Date) => ({
    id: randomUUID(), itemType: 'desktop' as const, itemId: model.id, userId: owner.id, reservables: { vgpus: [] }, start, end,
  });
  await db.insert(schema.bookings).values([
    booking(new Date(bookingStart.getTime() - 5 * hour), new Date(bookingStart.getTime() - 4 * hour)),
    booking(new Date(bookingStart.getTime() + 3 * hour), new Date(bookingStart.getTime() + 4 * hour)),
    booking(bookingStart, new Date(bookingStart.getTime() + hour)),
  ]);
}, scaled(240_000));
afterAll(async () => server?.close());

/** The keys of a desktop in the order the list carried them before it was made one query (zod wrote them in the schema's order). */
const KEYS_BEFORE = [
  'id', 'name', 'description', 'state', 'type', 'template', 'viewers', 'icon', 'image', 'ip', 'progress', 'editable', 'scheduled', 'force_stop_at', 'server',
  'accessed', 'tag', 'visible', 'user', 'user_name', 'group', 'group_name', 'category', 'category_name', 'reservables', 'interfaces',
  'current_action', 'storage', 'permissions', 'needs_booking', 'next_booking_start', 'next_booking_end', 'booking_id', 'vcpus', 'memory', 'hypervisor',
];

describe('GET /user/desktops of a person with hundreds of desktops', () => {
  it('answers every desktop as before, parsed by the contract, in one query', async () => {
    const { db } = server.ctx;
    const { res, body } = await list();
    expect(res.status).toBe(200);
    expect(res.headers.get(LIST_TOTAL_HEADER)).toBeNull();
    const desktops = z.array(ZDesktop).parse(body);
    // The model, the deployment's desktop, the visible copies (the demo `user`'s desktops are not theirs).
    expect(desktops).toHaveLength(1 + 1 + COPIES - 1);
    const names = desktops.map((d) => d.name);
    expect(names).toEqual([...names].sort());

    // One desktop, field by field, as the list answered it before (pre-change shape and values).
    const template = await demoTemplate(server);
    const [group] = await db.select().from(schema.groups).where(eq(schema.groups.id, owner.groupId));
    const [category] = await db.select().from(schema.categories).where(eq(schema.categories.id, owner.categoryId));
    const [disk] = await db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, model.id));
    const got = desktops.find((d) => d.id === model.id)!;
    const expected: TDesktop = {
      id: model.id, name: 'Model desktop', description: model.description, state: 'Stopped', type: 'persistent', template: template.id,
      viewers: ['browser-vnc', 'file-spice'], icon: model.icon, image: { id: model.image.id, type: model.image.type, url: model.image.url }, ip: null, progress: null, editable: true,
      scheduled: { shutdown: false }, force_stop_at: null, server: false, accessed: Math.floor(model.accessedAt!.getTime() / 1000), tag: false, visible: true, user: owner.id, user_name: owner.name,
      group: owner.groupId, group_name: group!.name, category: owner.categoryId, category_name: category!.name,
      reservables: { vgpus: model.hardware.reservables.vgpus }, interfaces: model.hardware.interfaces.map((i) => ({ id: i.id, mac: i.mac })), current_action: null,
      storage: [disk!.storageId], permissions: [], needs_booking: false,
      next_booking_start: formatBookingDate(bookingStart), next_booking_end: formatBookingDate(new Date(bookingStart.getTime() + hour)),
      booking_id: false, vcpus: model.hardware.vcpus, memory: model.hardware.memoryMb / 1024, hypervisor: null,
    };
    const raw = (body as Record<string, unknown>[]).find((d) => d.id === model.id)!;
    expect(raw).toEqual(expected);
    expect(Object.keys(raw)).toEqual(KEYS_BEFORE);
    expect(KEYS_BEFORE).toEqual(DESKTOP_FIELDS);
    expect(JSON.stringify(raw)).toBe(JSON.stringify(expected));

    // The deployment's desktop carries its deployment and the students' rights.
    const mine = desktops.find((d) => d.tag === deploymentId)!;
    expect(mine).toMatchObject({ tag: deploymentId, editable: false, visible: true, permissions: ['recreate'], next_booking_start: null, booking_id: false });
    expect(mine.storage).toHaveLength(1);
    expect(desktops.filter((d) => d.id !== model.id).every((d) => d.next_booking_start === null)).toBe(true);

    // The list is one query, whatever its length; a page with its count too.
    const whole = await countQueries(() => userDesktops(server.ctx, owner.id));
    expect(whole.result.items).toEqual(desktops);
    expect(whole.queries).toHaveLength(1);
    const paged = await countQueries(() => userDesktops(server.ctx, owner.id, { page: 2, per_page: 20 }));
    expect(paged.result).toEqual({ items: desktops.slice(20, 40), total: desktops.length });
    expect(paged.queries).toHaveLength(1);
    // A page past the end asks the count alone.
    const beyond = await countQueries(() => userDesktops(server.ctx, owner.id, { page: 99, per_page: 20 }));
    expect(beyond.result).toEqual({ items: [], total: desktops.length });
    expect(beyond.queries.length).toBeLessThanOrEqual(2);
  }, scaled(120_000));

  it('answers a page and its total, and only the fields asked', async () => {
    const all = z.array(ZDesktop).parse((await list()).body);
    const page = await list('?page=3&per_page=25');
    expect(page.res.status).toBe(200);
    expect(page.res.headers.get(LIST_TOTAL_HEADER)).toBe(String(all.length));
    expect(z.array(ZDesktop).parse(page.body)).toEqual(all.slice(50, 75));
    const last = await list(`?page=${Math.ceil(all.length / 100)}&per_page=100`);
    expect((last.body as unknown[]).length).toBe(all.length % 100 || 100);
    const beyond = await list('?page=50&per_page=100');
    expect(beyond.body).toEqual([]);
    expect(beyond.res.headers.get(LIST_TOTAL_HEADER)).toBe(String(all.length));
    // `page` alone pages by 50.
    expect((await list('?page=1')).body).toEqual(all.slice(0, 50));

    const fields = await list('?fields=id,name,state');
    expect(fields.body).toEqual(all.map((d) => ({ id: d.id, name: d.name, state: d.state })));
    const both = await list('?fields=storage,id&per_page=10');
    expect(both.body).toEqual(all.slice(0, 10).map((d) => ({ storage: d.storage, id: d.id })));
    // Every field may be asked: all of them is the whole desktop.
    expect((await list(`?fields=${DESKTOP_FIELDS.join(',')}`)).body).toEqual(all);
  }, scaled(120_000));

  it('refuses bad paging and unknown fields with a catalogue code', async () => {
    for (const q of ['?page=0', '?page=-1', '?page=abc', '?page=1.5', '?per_page=0', '?per_page=100000', '?page=', '?fields=', '?fields=id,nope', '?fields=password', '?fields=,,']) {
      const { res, body } = await list(q);
      expect(res.status, q).toBe(400);
      expect((body as { description_code: string }).description_code, q).toBe('validation_error');
    }
  }, scaled(120_000));

  it('answers the deployment\'s desktops as its events carry them, paged and with the fields asked, in two queries', async () => {
    const advanced = await tokenOf(server, 'advanced');
    const detail = async (query = '') => {
      const res = await call(server, `/api/v3/deployment/${deploymentId}${query}`, { token: advanced });
      return { res, body: (await res.json()) as Record<string, unknown> & { desktops: Record<string, unknown>[] } };
    };
    const whole = await detail();
    expect(whole.res.status).toBe(200);
    const parsed = ZDeploymentDetail.parse(whole.body);
    const rows = await desktopsOf(server.ctx.db, [deploymentId]);
    // The model's copy hidden from its user is still the deployment's.
    expect(parsed.desktops).toHaveLength(2);
    expect(whole.body.desktops).toEqual(await deploymentDesktopViews(server.ctx, rows));
    expect(Object.keys(whole.body.desktops[0]!)).toEqual([...KEYS_BEFORE, 'viewer', 'user_photo', 'deployment_id']);

    const page = await detail('?page=2&per_page=1&fields=id,deployment_id');
    expect(page.res.headers.get(LIST_TOTAL_HEADER)).toBe('2');
    expect(page.body.desktops).toEqual([{ id: parsed.desktops[1]!.id, deployment_id: deploymentId }]);
    expect(page.body.name).toBe(parsed.name);
    for (const q of ['?page=0', '?fields=nope', '?per_page=x']) {
      const bad = await detail(q);
      expect(bad.res.status, q).toBe(400);
      expect(bad.body.description_code, q).toBe('validation_error');
    }

    const [row] = await server.ctx.db.select().from(schema.deployments).where(eq(schema.deployments.id, deploymentId));
    const actor = await actorOf(server.ctx.db, await userRow(server, 'advanced'));
    const counted = await countQueries(() => deploymentDesktopList(server.ctx, row!, actor));
    expect(counted.result.items).toEqual(whole.body.desktops);
    expect(counted.queries).toHaveLength(2);
  }, scaled(120_000));

  it('leaves other people\'s desktops out', async () => {
    const other = await server.ctx.db.select({ id: schema.domains.id }).from(schema.domains)
      .where(and(eq(schema.domains.kind, 'desktop'), eq(schema.domains.name, 'Demo desktop')));
    const ids = new Set(z.array(ZDesktop).parse((await list()).body).map((d) => d.id));
    expect(other.length).toBeGreaterThan(0);
    expect(other.some((o) => ids.has(o.id))).toBe(false);
  });
});
