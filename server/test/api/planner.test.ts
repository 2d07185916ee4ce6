import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { formatBookingDate } from '@vdi/contracts';
import { schema } from '../../src/db';
import { manualClock, type ManualClock } from '../../src/scheduler/clock';
import { createDesktopFromTemplate } from '../../src/modules/desktops/create';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { recordEvents, socketOf, until } from '../helpers/wait';

// The admin planner (spec 001 §3 "Planner", §5, §7 "Admin planner"): admins only; a card offers
// one profile at a time; each planner rule refused with its code; a change that would leave
// bookings without a unit is refused; boundary jobs are kept in the database. No machine boots.

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const CARD = 'demo-nvidia-a40';
let server: TestServer;
let clock: ManualClock;
let admin: string;
let manager: string;
let uma: string;
let gpuDesktop: string;
let seedEnd: Date; // where the seeded plans (2Q four weeks, then 4Q two weeks) end

beforeAll(async () => {
  clock = manualClock(new Date());
  server = await startTestServer({ clock });
  [admin, manager, uma] = await Promise.all(['admin', 'manager', 'user'].map((u) => loginToken(server, u)));
  const list = await (await call(server, '/api/v3/user/desktops', { token: uma })).json();
  gpuDesktop = list.find((d: { name: string }) => d.name === 'GPU desktop').id;
  const plans = await server.ctx.db.select().from(schema.reservablePlans);
  seedEnd = new Date(Math.max(...plans.map((p) => p.end.getTime())));
}, scaled(240_000));
afterAll(async () => server?.close());

const fmt = (d: Date | number) => formatBookingDate(new Date(d));
const afterSeed = (days: number) => fmt(seedEnd.getTime() + days * DAY);
const json = async (r: Response) => ({ status: r.status, body: await r.json() });
const expectCode = async (r: Response, status: number, code: string) => {
  const body = await r.json();
  expect({ status: r.status, code: body.description_code }).toEqual({ status, code });
  return body;
};
const newPlan = (token: string, body: Record<string, unknown>) =>
  call(server, '/api/v3/admin/reservables_planner', { token, body: { item_type: 'gpus', item_id: CARD, subitem_id: 'NVIDIA-A40-4Q', ...body } });
const editPlan = (token: string, id: string, body: Record<string, unknown>) => call(server, `/api/v3/admin/reservables_planner/${id}`, { token, method: 'PUT', body });
const planJobs = async (id: string) => (await server.app.bookings.scheduler.pending(`plan:${id}`)).map((j) => j.kind);

describe('the planner is for admins', () => {
  it('refuses managers and users on every call', async () => {
    const range = `${encodeURIComponent(fmt(clock.now()))}/${encodeURIComponent(afterSeed(1))}`;
    for (const token of [manager, uma]) {
      for (const [method, path] of [
        ['GET', '/admin/reservables'],
        ['GET', '/admin/reservables/gpus'],
        ['GET', `/admin/reservables/enabled/gpus/${CARD}`],
        ['GET', `/admin/reservables_planner/${CARD}/${range}`],
        ['DELETE', '/admin/reservables_planner/demo-plan-2q'],
      ] as const) {
        await expectCode(await call(server, `/api/v3${path}`, { token, method }), 403, 'forbidden');
      }
      await expectCode(await newPlan(token, { start: afterSeed(1), end: afterSeed(2) }), 403, 'forbidden');
    }
  });

  it('lists the kinds, the cards with their profiles, and the seeded plans', async () => {
    expect(await (await call(server, '/api/v3/admin/reservables', { token: admin })).json()).toEqual(['gpus']);
    const cards = await (await call(server, '/api/v3/admin/reservables/gpus', { token: admin })).json();
    expect(cards).toHaveLength(1);
    expect(cards[0]).toMatchObject({ id: CARD, brand: 'NVIDIA', model: 'A40', item_type: 'gpus' });
    expect(cards[0].subitems.map((s: { id: string; units: number }) => [s.id, s.units])).toEqual([['NVIDIA-A40-2Q', 24], ['NVIDIA-A40-4Q', 12]]);
    const enabled = await (await call(server, `/api/v3/admin/reservables/enabled/gpus/${CARD}`, { token: admin })).json();
    expect(enabled).toHaveLength(2);
    await expectCode(await call(server, '/api/v3/admin/reservables/enabled/gpus/nope', { token: admin }), 404, 'reservable_item_not_found');
    const plans = await (
      await call(server, `/api/v3/admin/reservables_planner/${CARD}/${encodeURIComponent(fmt(clock.now()))}/${encodeURIComponent(afterSeed(1))}`, { token: admin })
    ).json();
    expect(plans.map((p: { id: string; subitem_id: string; units: number }) => [p.id, p.subitem_id, p.units])).toEqual([
      ['demo-plan-2q', 'NVIDIA-A40-2Q', 24],
      ['demo-plan-4q', 'NVIDIA-A40-4Q', 12],
    ]);
    // The seeded plans got their boundary jobs at start-up.
    expect(await planJobs('demo-plan-4q')).toEqual(['plan.start', 'plan.warn', 'plan.warn', 'plan.end']);
  });
});

describe('planner rules', () => {
  it('refuses each broken rule with its code', async () => {
    const now = clock.now().getTime();
    await expectCode(await newPlan(admin, { start: fmt(now - 2 * DAY), end: fmt(now - DAY) }), 400, 'planner_past_booking');
    await expectCode(await newPlan(admin, { start: afterSeed(2), end: afterSeed(1) }), 400, 'planner_end_before_start');
    await expectCode(await newPlan(admin, { start: afterSeed(1), end: fmt(seedEnd.getTime() + DAY + 3 * MIN) }), 400, 'planner_minimum_time');
    await expectCode(await newPlan(admin, { start: afterSeed(1), end: afterSeed(400) }), 400, 'planner_maximum_time');
    await expectCode(await newPlan(admin, { start: fmt(seedEnd.getTime() - DAY), end: afterSeed(1) }), 409, 'plan_overlap');
    await expectCode(await newPlan(admin, { subitem_id: 'NVIDIA-A16-2Q', start: afterSeed(1), end: afterSeed(2) }), 400, 'reservable_not_found');
    await expectCode(await newPlan(admin, { item_id: 'nope', start: afterSeed(1), end: afterSeed(2) }), 404, 'reservable_item_not_found');
    await expectCode(await newPlan(admin, { start: 'later', end: afterSeed(2) }), 400, 'validation_error');
  });

  it('adds, moves and deletes a plan, live and with its jobs', async () => {
    const socket = await socketOf(server, admin);
    const seen = recordEvents(socket, ['plan_add', 'plan_update', 'plan_delete']);
    const { status, body } = await json(await newPlan(admin, { start: afterSeed(1), end: afterSeed(3) }));
    expect(status).toBe(200);
    expect(body).toMatchObject({ item_id: CARD, subitem_id: 'NVIDIA-A40-4Q', subitem_name: 'NVIDIA A40 · 4 GB', units: 12, units_booked: 0, start: afterSeed(1) });
    expect(await planJobs(body.id)).toEqual(['plan.start', 'plan.warn', 'plan.warn', 'plan.end']);
    const moved = await json(await editPlan(admin, body.id, { subitem_id: 'NVIDIA-A40-2Q', start: afterSeed(2), end: afterSeed(4) }));
    expect(moved.body).toMatchObject({ subitem_id: 'NVIDIA-A40-2Q', units: 24, start: afterSeed(2) });
    const jobs = await server.app.bookings.scheduler.pending(`plan:${body.id}`);
    expect(jobs[0]!.runAt.getTime()).toBe(seedEnd.getTime() + 2 * DAY);
    expect((await call(server, `/api/v3/admin/reservables_planner/${body.id}`, { token: admin, method: 'DELETE' })).status).toBe(200);
    expect(await planJobs(body.id)).toEqual([]);
    await expectCode(await call(server, `/api/v3/admin/reservables_planner/${body.id}`, { token: admin, method: 'DELETE' }), 404, 'plan_not_found');
    await until('plan events', async () => ['plan_add', 'plan_update', 'plan_delete'].every((e) => seen.some((s) => s.event === e)));
    socket.close();
  });

  it('refuses a change that would leave bookings without a GPU', async () => {
    const start = new Date(Math.ceil(clock.now().getTime() / (60 * MIN)) * 60 * MIN + 2 * 60 * MIN);
    const booking = await json(
      await call(server, '/api/v3/booking/event', { token: uma, body: { element_id: gpuDesktop, element_type: 'desktop', start: fmt(start), end: fmt(start.getTime() + 30 * MIN) } }),
    );
    expect(booking.status).toBe(200);
    const [seeded] = await server.ctx.db.select().from(schema.reservablePlans).where(eq(schema.reservablePlans.id, 'demo-plan-2q'));
    const body = await expectCode(await call(server, '/api/v3/admin/reservables_planner/demo-plan-2q', { token: admin, method: 'DELETE' }), 409, 'plan_has_bookings');
    expect(body.params).toEqual({ bookings: 1 });
    await expectCode(
      await editPlan(admin, 'demo-plan-2q', { subitem_id: 'NVIDIA-A40-4Q', start: fmt(seeded!.start), end: fmt(seeded!.end) }),
      409,
      'plan_has_bookings',
    );
    // Shortened to end before the booking: refused too; ending after it is fine.
    await expectCode(await editPlan(admin, 'demo-plan-2q', { subitem_id: 'NVIDIA-A40-2Q', start: fmt(seeded!.start), end: fmt(start) }), 409, 'plan_has_bookings');
    const ok = await json(await editPlan(admin, 'demo-plan-2q', { subitem_id: 'NVIDIA-A40-2Q', start: fmt(seeded!.start), end: fmt(start.getTime() + 60 * MIN) }));
    expect(ok.status).toBe(200);
    expect(ok.body.units_booked).toBe(1);
    // The seeded plan started in the past: its start may stay.
    expect(ok.body.start).toBe(fmt(seeded!.start));
  });
});

describe('plan boundaries', () => {
  it('warns the GPU desktops that no plan covers after the end (−15, −5) and stops them at it', async () => {
    // An admin runs a 2Q desktop without a booking (admins are exempt); its state is set here, no machine boots.
    const db = server.ctx.db;
    const [adminRow] = await db.select().from(schema.users).where(eq(schema.users.username, 'admin'));
    const [template] = await db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
    const desktop = await createDesktopFromTemplate(db, server.ctx.engine, template!, adminRow!, {
      name: 'Admin GPU', persistent: true, status: 'Stopped', hardware: { ...template!.hardware, reservables: { vgpus: ['NVIDIA-A40-2Q'] } },
    });
    await db.update(schema.domains).set({ status: 'Started' }).where(eq(schema.domains.id, desktop.id));
    const [plan] = await db.select().from(schema.reservablePlans).where(eq(schema.reservablePlans.id, 'demo-plan-2q'));
    const socket = await socketOf(server, admin);
    const msgs = recordEvents(socket, ['msg']);
    const scheduler = server.app.bookings.scheduler;
    clock.set(new Date(plan!.end.getTime() - 16 * MIN));
    await scheduler.idle();
    expect(msgs).toEqual([]);
    clock.set(new Date(plan!.end.getTime() - 15 * MIN));
    await scheduler.idle();
    await until('warning', async () => msgs.length === 1);
    expect(msgs[0]!.payload).toEqual({ type: 'warning', msg_code: 'plan-end', params: { date: fmt(plan!.end), minutes: 15, name: 'Admin GPU', desktop_id: desktop.id } });
    clock.set(new Date(plan!.end.getTime() - 5 * MIN));
    await scheduler.idle();
    await until('second warning', async () => msgs.length === 2);
    expect(msgs[1]!.payload).toMatchObject({ type: 'danger', params: { minutes: 5 } });
    expect((await db.select().from(schema.domains).where(eq(schema.domains.id, desktop.id)))[0]!.status).toBe('Started');
    clock.set(plan!.end);
    await scheduler.idle();
    expect((await db.select().from(schema.domains).where(eq(schema.domains.id, desktop.id)))[0]!.status).not.toBe('Started');
    socket.close();
  });
});
