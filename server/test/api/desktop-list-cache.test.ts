import { scaled } from '../helpers/slowdown';
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { schema } from '../../src/db';
import { manualClock, type ManualClock } from '../../src/scheduler/clock';
import { userDesktops } from '../../src/modules/shared/desktop-view';
import { call, startTestServer, type TestServer } from '../helpers/server';
import { copyUser, makeDeployment, makeDesktop, tokenOf, userRow } from '../helpers/routes-fixtures';
import { recordQueries } from '../helpers/query-count';

// GET /user/desktops keeps its answer while the user's counter (raised by database triggers)
// stands. Every write the list shows — through the API or straight into the database, as another
// server process would — must be in the very next answer: each case writes, then compares the
// answer with the list built afresh.

let server: TestServer;
let clock: ManualClock;
beforeAll(async () => {
  clock = manualClock(new Date());
  server = await startTestServer({ clock });
}, scaled(240_000));
afterAll(async () => server?.close());

const db = () => server.ctx.db;
const MIN = 60_000;

async function person(name: string) {
  const row = await copyUser(server, { username: 'user' }, name);
  return { row, token: await tokenOf(server, name) };
}

/** The answer as sent, and the list built afresh right after. */
async function answerAndFresh(userId: string, token: string, query = '') {
  const res = await call(server, `/api/v3/user/desktops${query}`, { token });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const sent = await res.json();
  const params = Object.fromEntries(new URLSearchParams(query.slice(1)));
  const fresh = await userDesktops(server.ctx, userId, {
    page: params.page ? Number(params.page) : undefined,
    per_page: params.per_page ? Number(params.per_page) : undefined,
    fields: params.fields ? (params.fields.split(',') as never) : undefined,
  });
  return { sent, fresh: JSON.parse(JSON.stringify(fresh.items)), total: res.headers.get('x-total-count') };
}

async function expectCurrent(userId: string, token: string, query = '') {
  const { sent, fresh } = await answerAndFresh(userId, token, query);
  expect(sent).toEqual(fresh);
  return sent as { id: string; name: string }[];
}

describe('the kept desktop list is never stale', () => {
  it('sees each kind of write at once, through the API or behind the server’s back', async () => {
    const { row: owner, token } = await person('lc-owner');
    const first = await makeDesktop(server, owner, { name: 'Alpha' });
    await makeDesktop(server, owner, { name: 'Beta' });
    await expectCurrent(owner.id, token);
    await expectCurrent(owner.id, token); // kept

    // The desktop row itself (a status written by the engine's watcher, a rename).
    await db().update(schema.domains).set({ status: 'Started' }).where(eq(schema.domains.id, first.id));
    expect((await expectCurrent(owner.id, token)).find((d) => d.id === first.id)).toMatchObject({ state: 'Started' });
    await db().update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, first.id));
    await expectCurrent(owner.id, token);
    expect((await call(server, `/api/v3/domain/${first.id}`, { token, method: 'PUT', body: { name: 'Alpha renamed' } })).status).toBe(200);
    expect((await expectCurrent(owner.id, token)).map((d) => d.name)).toContain('Alpha renamed');

    // A new desktop, a deleted one.
    const third = await makeDesktop(server, owner, { name: 'Gamma' });
    expect(await expectCurrent(owner.id, token)).toHaveLength(3);
    await db().delete(schema.domains).where(eq(schema.domains.id, third.id));
    expect(await expectCurrent(owner.id, token)).toHaveLength(2);

    // Its disks.
    await db().update(schema.domainDisks).set({ position: 7 }).where(eq(schema.domainDisks.domainId, first.id));
    await expectCurrent(owner.id, token);

    // The owner's name, the group's and the category's names.
    await db().update(schema.users).set({ name: 'Owner renamed' }).where(eq(schema.users.id, owner.id));
    expect((await expectCurrent(owner.id, token))[0]).toMatchObject({ user_name: 'Owner renamed' });
    const [group] = await db().select().from(schema.groups).where(eq(schema.groups.id, owner.groupId));
    await db().update(schema.groups).set({ name: 'Group renamed' }).where(eq(schema.groups.id, owner.groupId));
    expect((await expectCurrent(owner.id, token))[0]).toMatchObject({ group_name: 'Group renamed' });
    await db().update(schema.groups).set({ name: group!.name }).where(eq(schema.groups.id, owner.groupId));
    const [category] = await db().select().from(schema.categories).where(eq(schema.categories.id, owner.categoryId));
    await db().update(schema.categories).set({ name: 'Category renamed' }).where(eq(schema.categories.id, owner.categoryId));
    expect((await expectCurrent(owner.id, token))[0]).toMatchObject({ category_name: 'Category renamed' });
    await db().update(schema.categories).set({ name: category!.name }).where(eq(schema.categories.id, owner.categoryId));
    await expectCurrent(owner.id, token);
  });

  it('sees a deployment’s desktops, visibility and rights', async () => {
    const { row: student, token } = await person('lc-student');
    const teacher = await tokenOf(server, 'advanced');
    const deployment = { id: await makeDeployment(server, teacher, [student.id]) };
    const [desktop] = await db().select().from(schema.domains).where(eq(schema.domains.tag, deployment.id));
    expect(desktop).toBeDefined();
    await expectCurrent(student.id, token);
    await db().update(schema.domains).set({ tagVisible: false }).where(eq(schema.domains.tag, deployment.id));
    expect(await expectCurrent(student.id, token)).toHaveLength(0);
    await db().update(schema.domains).set({ tagVisible: true }).where(eq(schema.domains.tag, deployment.id));
    expect(await expectCurrent(student.id, token)).toHaveLength(1);
    await db().update(schema.deployments).set({ userPermissions: [] }).where(eq(schema.deployments.id, deployment.id));
    expect((await expectCurrent(student.id, token))[0]).toMatchObject({ permissions: [] });
  });

  it('sees a pool’s desktop once it is given, and raises nobody’s counter for a prepared one', async () => {
    const { row: owner, token: ownerToken } = await person('lc-pool-owner');
    const { row: student, token } = await person('lc-pool-student');
    const prepared = await makeDesktop(server, owner, { name: 'Pooled' });
    const revOf = async (userId: string) =>
      Number((await db().select().from(schema.desktopListRevs).where(eq(schema.desktopListRevs.userId, userId)))[0]?.rev ?? 0);
    // (no pool row is needed: the list reads the column)
    await db().update(schema.domains).set({ poolId: randomUUID() }).where(eq(schema.domains.id, prepared.id));
    expect(await expectCurrent(owner.id, ownerToken)).toHaveLength(0);
    await expectCurrent(student.id, token);
    // Prepared, it is in nobody's list: its starts and stops raise no counter (a class's givings would queue on its
    // owner's one row).
    const before = await revOf(owner.id);
    await db().update(schema.domains).set({ status: 'Started' }).where(eq(schema.domains.id, prepared.id));
    expect(await revOf(owner.id)).toBe(before);
    // Given: in its person's very next answer, and still not in the pool owner's.
    await db().update(schema.domains).set({ userId: student.id, poolAssignedAt: new Date() }).where(eq(schema.domains.id, prepared.id));
    expect(await revOf(owner.id)).toBe(before);
    expect((await expectCurrent(student.id, token)).map((d) => d.id)).toEqual([prepared.id]);
    expect(await expectCurrent(owner.id, ownerToken)).toHaveLength(0);
    // Given back (gone), out of it at once.
    await db().delete(schema.domains).where(eq(schema.domains.id, prepared.id));
    expect(await expectCurrent(student.id, token)).toHaveLength(0);
  });

  it('sees bookings made and removed, and a booking’s end passing', async () => {
    const { row: owner, token } = await person('lc-booker');
    const desktop = await makeDesktop(server, owner, { name: 'Booked' });
    await expectCurrent(owner.id, token);
    const start = new Date(Math.ceil(clock.now().getTime() / MIN) * MIN + 10 * MIN);
    const end = new Date(start.getTime() + 30 * MIN);
    const id = randomUUID();
    await db().insert(schema.bookings).values({ id, itemType: 'desktop', itemId: desktop.id, userId: owner.id, reservables: { vgpus: [] }, start, end });
    expect((await expectCurrent(owner.id, token))[0]!).toHaveProperty('next_booking_start');
    expect(((await expectCurrent(owner.id, token))[0] as unknown as { next_booking_end: string | null }).next_booking_end).not.toBeNull();
    // The clock passes the booking's end: the next booking is no longer this one.
    clock.set(new Date(end.getTime() + MIN));
    expect(((await expectCurrent(owner.id, token))[0] as unknown as { next_booking_end: string | null }).next_booking_end).toBeNull();
    clock.set(new Date(start.getTime() - 5 * MIN));
    await db().delete(schema.bookings).where(eq(schema.bookings.id, id));
    expect(((await expectCurrent(owner.id, token))[0] as unknown as { next_booking_end: string | null }).next_booking_end).toBeNull();
  });

  it('keeps pages and field selections apart', async () => {
    const { row: owner, token } = await person('lc-pages');
    for (const name of ['P1', 'P2', 'P3']) await makeDesktop(server, owner, { name });
    const page = await answerAndFresh(owner.id, token, '?page=2&per_page=2');
    expect(page.sent).toEqual(page.fresh);
    expect(page.total).toBe('3');
    expect(await expectCurrent(owner.id, token, '?fields=id,name')).toEqual([
      { id: expect.any(String), name: 'P1' }, { id: expect.any(String), name: 'P2' }, { id: expect.any(String), name: 'P3' },
    ]);
    expect(await expectCurrent(owner.id, token)).toHaveLength(3);
    await makeDesktop(server, owner, { name: 'P0' });
    expect((await expectCurrent(owner.id, token, '?fields=id,name'))[0]).toMatchObject({ name: 'P0' });
    expect((await answerAndFresh(owner.id, token, '?page=2&per_page=2')).total).toBe('4');
  });

  it('a kept answer costs the guard’s query and one read of the counter', async () => {
    const user = await userRow(server, 'user');
    const token = await tokenOf(server, 'user');
    await expectCurrent(user.id, token);
    const rec = recordQueries(db());
    onTestFinished(() => rec.stop());
    const once = async () => {
      rec.reset();
      const res = await call(server, '/api/v3/user/desktops', { token });
      expect(res.status).toBe(200);
      await res.text();
      return rec.queries.length;
    };
    // The server's background work only adds to a count: the least of a few tries is the call's own.
    const count = Math.min(await once(), await once(), await once());
    const guard = Math.min(...(await Promise.all([0, 1, 2].map(async () => {
      rec.reset();
      await (await call(server, '/api/v3/user/appliedquota', { token })).text();
      return rec.queries.length;
    }))));
    expect(count).toBeLessThanOrEqual(2);
    expect(guard).toBeGreaterThanOrEqual(1);
  });
});
