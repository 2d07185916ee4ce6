import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { formatBookingDate, type TBookingItemType } from '@vdi/contracts';
import { schema } from '../../src/db';
import { manualClock, type ManualClock } from '../../src/scheduler/clock';
import { createDesktopFromTemplate } from '../../src/modules/desktops/create';
import { call, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';
import { recordEvents, socketOf, until } from '../helpers/wait';

// Bookings of GPU profiles (spec core §5 and §7, reference §2.9 and §6.2) against the real server
// with a manual clock: the seeded NVIDIA A40 offers 2Q (24 units) for four weeks; Uma (`user`)
// has a "GPU desktop" that needs 2Q. Every rule is refused by the server with its code; a
// deployment books one unit per desktop; the scheduler gives the desktop its booking at the start,
// warns at −15 and −5 minutes and stops it at the end. One real boot.

const MIN = 60_000;
let server: TestServer;
let clock: ManualClock;
let uma: string;
let sara: string;
let teo: string;
let admin: string;
let umaId: string;
let gpuDesktop: string;
let plainDesktop: string;
let templateId: string;
let T0: Date; // a full hour inside the seeded plan, an hour or two ahead

beforeAll(async () => {
  clock = manualClock(new Date());
  server = await startTestServer({ clock, env: { SHUTDOWN_TIMEOUT_SECONDS: '5' }, startConcurrency: 1 });
  [uma, sara, teo, admin] = await Promise.all(['user', 'student01', 'advanced', 'admin'].map((u) => loginToken(server, u)));
  umaId = await userIdOf(server, 'user');
  const list = await (await call(server, '/api/v3/user/desktops', { token: uma })).json();
  gpuDesktop = list.find((d: { name: string }) => d.name === 'GPU desktop').id;
  plainDesktop = list.find((d: { name: string }) => d.name === 'Demo desktop').id;
  const [t] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
  templateId = t!.id;
  T0 = new Date(Math.ceil(clock.now().getTime() / (60 * MIN)) * 60 * MIN + 60 * MIN);
}, scaled(240_000));
afterAll(async () => server?.close());

const at = (minutes: number) => formatBookingDate(new Date(T0.getTime() + minutes * MIN));
const range = () => `startDate=${encodeURIComponent(at(-24 * 60))}&endDate=${encodeURIComponent(at(7 * 24 * 60))}`;
const json = async (r: Response) => ({ status: r.status, body: await r.json() });
const expectCode = async (r: Response, status: number, code: string) => {
  const body = await r.json();
  expect({ status: r.status, code: body.description_code }).toEqual({ status, code });
  return body;
};
const book = (token: string, body: Record<string, unknown>) =>
  call(server, '/api/v3/booking/event', { token, body: { element_id: gpuDesktop, element_type: 'desktop', ...body } });
const bookAt = (token: string, from: number, to: number, over: Record<string, unknown> = {}) => book(token, { start: at(from), end: at(to), ...over });
const del = (token: string, id: string) => call(server, `/api/v3/booking/event/${id}`, { token, method: 'DELETE' });
const desktopView = async (token: string, id: string) =>
  (await (await call(server, '/api/v3/user/desktops', { token })).json()).find((d: { id: string }) => d.id === id);
const start = (token: string, id: string) => call(server, `/api/v3/desktop/start/${id}`, { token });
const row = async (id: string) => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0]!;
/** The availability segment that covers an instant (dates in one format compare as strings). */
const covering = (list: { start: string; end: string }[], t: string) => list.find((a) => a.start <= t && t < a.end);
/** An item's calendar (one list on the wire, as the original answers), split into bookings and availability. */
const calendar = async (token: string, type: TBookingItemType, id: string) => {
  const r = await call(server, `/api/v3/bookings/user/${id}/${type}?${range()}`, { token });
  expect(r.status).toBe(200);
  const list = (await r.json()) as { id: string; start: string; end: string; event_type: string }[];
  return { events: list.filter((e) => e.event_type === 'event'), availability: list.filter((e) => e.event_type !== 'event') };
};
const pendingJobs = async (bookingId: string) => (await server.app.bookings.scheduler.pending(`booking:${bookingId}`)).map((j) => j.kind);
const tick = async (minutes: number) => {
  clock.advance(minutes * MIN);
  await server.app.bookings.scheduler.idle();
};
const gpuDesktopFor = async (username: string, name: string, tag?: string) => {
  const db = server.ctx.db;
  const [user] = await db.select().from(schema.users).where(eq(schema.users.username, username));
  const [template] = await db.select().from(schema.domains).where(eq(schema.domains.id, templateId));
  return createDesktopFromTemplate(db, server.ctx.engine, template!, user!, {
    name, persistent: true, status: 'Stopped', tag, hardware: { ...template!.hardware, reservables: { vgpus: ['NVIDIA-A40-2Q'] } },
  });
};

describe('the calendar of an item', () => {
  it('answers the bookings and the availability of the desktop’s profile', async () => {
    const { status, body } = await json(await call(server, `/api/v3/bookings/user/${gpuDesktop}/desktop?${range()}`, { token: uma }));
    expect(status).toBe(200);
    // One list, as the original answers: no booking yet, only the availability.
    expect(body.length).toBeGreaterThan(0);
    expect(body[0]).toMatchObject({ event_type: 'available', units: 24, subitem_id: 'NVIDIA-A40-2Q' });
    // returnType as a path segment: only the events.
    const events = await (await call(server, `/api/v3/bookings/user/${gpuDesktop}/desktop/event?${range()}`, { token: uma })).json();
    expect(events).toEqual([]);
  });

  it('is the owner’s: others get 403, bad dates 400', async () => {
    await expectCode(await call(server, `/api/v3/bookings/user/${gpuDesktop}/desktop?${range()}`, { token: sara }), 403, 'forbidden');
    await expectCode(await call(server, `/api/v3/bookings/user/${gpuDesktop}/desktop?startDate=monday&endDate=friday`, { token: uma }), 400, 'validation_error');
  });

  it('gives the rule of the person: default for users, default admins for admins', async () => {
    expect(await (await call(server, `/api/v3/bookings/priority/desktop/${gpuDesktop}`, { token: uma })).json()).toEqual({
      priority: { 'NVIDIA-A40-2Q': 1 }, forbid_time: 0, max_time: 60, max_items: 1, name: 'GPU desktop',
      units: 1, reservables: { vgpus: ['NVIDIA-A40-2Q'] },
    });
    expect(await (await call(server, `/api/v3/bookings/priority/desktop/${gpuDesktop}`, { token: admin })).json()).toMatchObject({
      priority: { 'NVIDIA-A40-2Q': 999 }, forbid_time: 1, max_time: 999999,
    });
  });

  it('lists the GPU profiles a user may pick', async () => {
    const { body } = await json(await call(server, '/api/v3/domains/allowed/reservables', { token: uma }));
    expect(body.vgpus.map((v: { id: string }) => v.id).sort()).toEqual(['NVIDIA-A40-2Q', 'NVIDIA-A40-4Q']);
  });
});

describe('booking rules on the server', () => {
  it('refuses each broken rule with its code', async () => {
    await expectCode(await bookAt(uma, 60, 30), 400, 'booking_new_event_end_error');
    await expectCode(await bookAt(uma, 0, 4), 400, 'booking_minimum_time');
    await expectCode(await book(uma, { start: formatBookingDate(new Date(clock.now().getTime() - 30 * MIN)), end: at(0) }), 400, 'booking_new_event_start_error');
    await expectCode(await bookAt(uma, 0, 90), 428, 'bookings_max_time_reached');
    await expectCode(await bookAt(uma, 45 * 24 * 60, 45 * 24 * 60 + 30), 409, 'booking_does_not_fit_date');
    await expectCode(await book(uma, { element_id: plainDesktop, start: at(0), end: at(30) }), 400, 'booking_not_needed');
    await expectCode(await bookAt(sara, 0, 30), 403, 'forbidden');
    await expectCode(await book(uma, { start: 'soon', end: at(30) }), 400, 'validation_error');
  });

  it('refuses a start within the forbid time of the person’s rule', async () => {
    const db = server.ctx.db;
    await db.insert(schema.bookingPriorities).values({
      id: 'students-notice', ruleId: 'default', name: 'students book a day ahead', priority: 5, forbidTime: 24 * 60, maxTime: 60, maxItems: 1,
      allowed: { roles: false, categories: false, groups: ['default-students-1a'], users: false },
    });
    try {
      await expectCode(await bookAt(uma, 0, 30), 428, 'not_enough_advanced_time');
      expect((await bookAt(uma, 24 * 60, 24 * 60 + 30)).status).toBe(200);
    } finally {
      await db.delete(schema.bookingPriorities).where(eq(schema.bookingPriorities.id, 'students-notice'));
      await db.delete(schema.bookings).where(eq(schema.bookings.userId, umaId));
    }
  });

  it('books a slot; then max items, overlap and the units of the plan hold', async () => {
    const socket = await socketOf(server, uma);
    const seen = recordEvents(socket, ['bookingitem_add', 'booking_add', 'desktop_update']);
    const { status, body } = await json(await bookAt(uma, 0, 60, { title: 'Rendering' }));
    expect(status).toBe(200);
    expect(body).toMatchObject({
      item_id: gpuDesktop, item_type: 'desktop', element_id: gpuDesktop, title: 'Rendering', units: 1, start: at(0), end: at(60),
      reservables: { vgpus: ['NVIDIA-A40-2Q'] }, event_type: 'event', editable: true, in_progress: false, user_id: umaId,
    });
    expect(body.plans).toEqual([expect.objectContaining({ plan_id: 'demo-plan-2q', subitem_id: 'NVIDIA-A40-2Q', units_booked: 1 })]);
    await until('live events', async () => seen.some((e) => e.event === 'bookingitem_add') && seen.some((e) => e.event === 'desktop_update'));
    socket.close();
    expect(await pendingJobs(body.id)).toEqual(['booking.start', 'booking.warn', 'booking.warn', 'booking.end']);

    // The calendar, the summary and the desktop show it.
    const cal = await calendar(uma, 'desktop', gpuDesktop);
    expect(cal.events.map((e) => e.id)).toEqual([body.id]);
    expect(cal.availability.find((a) => a.start === at(0))).toMatchObject({ units: 23, event_type: 'available' });
    const summary = await (await call(server, `/api/v3/bookings/user?${range()}`, { token: uma })).json();
    expect(summary.map((b: { id: string; item_name: string }) => [b.id, b.item_name])).toEqual([[body.id, 'GPU desktop']]);
    expect(await desktopView(uma, gpuDesktop)).toMatchObject({ needs_booking: true, booking_id: false, next_booking_start: at(0), next_booking_end: at(60) });

    await expectCode(await bookAt(uma, 120, 150), 428, 'booking_max_items_exceeded');
    // An admin may hold many, but not on top of the desktop's own booking.
    await expectCode(await bookAt(admin, 30, 90), 409, 'booking_new_event_overlap_error');

    // Units: with one unit in the plan, Sara's GPU desktop cannot share the slot.
    const saras = await gpuDesktopFor('student01', 'Sara GPU');
    const db = server.ctx.db;
    await db.update(schema.reservablePlans).set({ units: 1 }).where(eq(schema.reservablePlans.id, 'demo-plan-2q'));
    try {
      await expectCode(await book(sara, { element_id: saras.id, start: at(30), end: at(60) }), 409, 'booking_does_not_fit_date');
      const ok = await json(await book(sara, { element_id: saras.id, start: at(60), end: at(90) }));
      expect(ok.status).toBe(200);
      // A higher priority (the admins' rule) sees Sara's booking as overridable, and displaces it.
      const adminGpu = await gpuDesktopFor('admin', 'Admin GPU');
      const adminCal = await calendar(admin, 'desktop', adminGpu.id);
      expect(covering(adminCal.availability, at(60))).toMatchObject({ event_type: 'overridable', units: 0 });
      const saraCal = await calendar(sara, 'desktop', saras.id);
      expect(covering(saraCal.availability, at(0))).toMatchObject({ event_type: 'unavailable' });
      const saraSocket = await socketOf(server, sara);
      const saraSeen = recordEvents(saraSocket, ['bookingitem_delete']);
      const over = await json(await book(admin, { element_id: adminGpu.id, start: at(60), end: at(90) }));
      expect(over.status).toBe(200);
      expect(await db.select().from(schema.bookings).where(eq(schema.bookings.id, ok.body.id))).toEqual([]);
      await until('displaced booking event', async () => saraSeen.some((e) => e.payload.id === ok.body.id));
      saraSocket.close();
      expect((await del(admin, over.body.id)).status).toBe(200);
    } finally {
      await db.update(schema.reservablePlans).set({ units: 24 }).where(eq(schema.reservablePlans.id, 'demo-plan-2q'));
    }
  });

  it('moves a booking with form data, re-planning its jobs; others cannot touch it', async () => {
    const [b] = await server.ctx.db.select().from(schema.bookings).where(eq(schema.bookings.itemId, gpuDesktop));
    const form = new URLSearchParams({ title: 'Moved', start: at(120).replace('+0000', '+00:00'), end: at(150).replace('+0000', '+00:00') });
    const res = await fetch(`${server.url}/api/v3/booking/event/${b!.id}`, { method: 'PUT', headers: { authorization: `Bearer ${uma}` }, body: form });
    const moved = await res.json();
    expect(res.status).toBe(200);
    expect(moved).toMatchObject({ title: 'Moved', start: at(120), end: at(150) });
    const jobs = await server.app.bookings.scheduler.pending(`booking:${b!.id}`);
    expect(jobs.map((j) => j.runAt.getTime())).toEqual([120, 135, 145, 150].map((m) => T0.getTime() + m * MIN));
    const bad = await fetch(`${server.url}/api/v3/booking/event/${b!.id}`, {
      method: 'PUT', headers: { authorization: `Bearer ${uma}` }, body: new URLSearchParams({ start: at(120), end: at(300) }),
    });
    await expectCode(bad, 428, 'bookings_max_time_reached');
    await expectCode(await call(server, `/api/v3/booking/event/${b!.id}`, { token: sara, method: 'DELETE' }), 403, 'forbidden');
  });
});

describe('start checks', () => {
  it('refuses to start before the booking (with its start), and without one', async () => {
    const [b] = await server.ctx.db.select().from(schema.bookings).where(eq(schema.bookings.itemId, gpuDesktop));
    const body = await expectCode(await start(uma, gpuDesktop), 428, 'desktop_not_booked_until');
    expect(body.params).toEqual({ start: at(120) });
    expect((await del(uma, b!.id)).status).toBe(200);
    expect(await pendingJobs(b!.id)).toEqual([]);
    await expectCode(await start(uma, gpuDesktop), 428, 'desktop_not_booked');
  });

  it('says what limits start-now, and lists the profiles that could start now', async () => {
    const { body } = await json(await call(server, `/api/v3/booking/max_booking_date/${gpuDesktop}`, { token: uma }));
    const now = Math.floor(clock.now().getTime() / MIN) * MIN;
    expect(body).toEqual({ max_booking_date: formatBookingDate(new Date(now + 60 * MIN)) });
    await expectCode(await call(server, `/api/v3/booking/max_booking_date/${plainDesktop}`, { token: uma }), 400, 'booking_not_needed');
    const avail = await (await call(server, '/api/v3/booking/reservables_available', { token: uma })).json();
    // 4Q is planned only after the four weeks of 2Q.
    expect(avail.reservables_available.map((r: { id: string }) => r.id)).toEqual(['NVIDIA-A40-2Q']);
  });
});

describe('deployments book one unit per desktop', () => {
  let deployment: string;
  let studentDesktop: string;
  beforeAll(async () => {
    const db = server.ctx.db;
    const teoId = await userIdOf(server, 'advanced');
    const [teoRow] = await db.select().from(schema.users).where(eq(schema.users.id, teoId));
    const [template] = await db.select().from(schema.domains).where(eq(schema.domains.id, templateId));
    deployment = 'gpu-lab';
    await db.insert(schema.deployments).values({
      id: deployment, name: 'GPU lab', desktopName: 'GPU lab desktop', userId: teoId, categoryId: teoRow!.categoryId, groupId: teoRow!.groupId,
      templateId, allowed: { roles: false, categories: false, groups: false, users: [] }, visible: true,
      createDict: { templateId, hardware: { ...template!.hardware, reservables: { vgpus: ['NVIDIA-A40-2Q'] } }, guestProperties: template!.guestProperties, image: template!.image },
    });
    studentDesktop = (await gpuDesktopFor('student01', 'GPU lab desktop', deployment)).id;
    await gpuDesktopFor('student02', 'GPU lab desktop', deployment);
  });

  it('books the deployment: two units; its desktops need it; students cannot book theirs alone', async () => {
    await expectCode(await start(sara, studentDesktop), 428, 'needs_deployment_booking');
    await expectCode(await book(sara, { element_id: studentDesktop, start: at(0), end: at(30) }), 428, 'needs_deployment_booking');
    await expectCode(await book(teo, { element_id: deployment, element_type: 'deployment', start: at(0), end: at(30), now: true }), 400, 'booking_now_only_desktops');
    await expectCode(await book(sara, { element_id: deployment, element_type: 'deployment', start: at(0), end: at(30) }), 403, 'forbidden');
    const { status, body } = await json(await book(teo, { element_id: deployment, element_type: 'deployment', start: at(0), end: at(60) }));
    expect(status).toBe(200);
    expect(body).toMatchObject({ item_type: 'deployment', units: 2, item_name: 'GPU lab' });
    expect((await (await call(server, `/api/v3/bookings/priority/deployment/${deployment}`, { token: teo })).json()).units).toBe(2);
    const cal = await calendar(teo, 'deployment', deployment);
    expect(cal.availability.find((a) => a.start === at(0))).toMatchObject({ units: 22 });
    // The student sees it in their summary and on their desktop.
    const summary = await (await call(server, `/api/v3/bookings/user?${range()}`, { token: sara })).json();
    expect(summary.map((b: { id: string }) => b.id)).toContain(body.id);
    expect(await desktopView(sara, studentDesktop)).toMatchObject({ next_booking_start: at(0) });
    await expectCode(await start(sara, studentDesktop), 428, 'desktop_not_booked_until');
    // At the start the scheduler gives both desktops the booking.
    clock.set(T0);
    await server.app.bookings.scheduler.idle();
    expect((await row(studentDesktop)).bookingId).toBe(body.id);
    expect((await desktopView(sara, studentDesktop)).booking_id).toBe(body.id);
    // A booking in progress cannot be deleted while a desktop runs.
    await server.ctx.db.update(schema.domains).set({ status: 'Started' }).where(eq(schema.domains.id, studentDesktop));
    await expectCode(await del(teo, body.id), 409, 'booking_deployment_delete_stop');
    await server.ctx.db.update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, studentDesktop));
    expect((await del(teo, body.id)).status).toBe(200);
    expect((await row(studentDesktop)).bookingId).toBeNull();
    // Booked by someone else (an admin), it is still in the owner's summary.
    const byAdmin = await json(await book(admin, { element_id: deployment, element_type: 'deployment', start: at(120), end: at(150) }));
    expect(byAdmin.status).toBe(200);
    const teoSummary = await (await call(server, `/api/v3/bookings/user?${range()}`, { token: teo })).json();
    expect(teoSummary.map((b: { id: string }) => b.id)).toEqual([byAdmin.body.id]);
    expect((await del(admin, byAdmin.body.id)).status).toBe(200);
  });

  it('deleting the deployment drops its bookings and frees their units', async () => {
    const { body } = await json(await book(teo, { element_id: deployment, element_type: 'deployment', start: at(180), end: at(210) }));
    expect(body.id).toBeTruthy();
    expect((await call(server, `/api/v3/deployments/${deployment}/permanent`, { token: teo, method: 'DELETE' })).status).toBe(200);
    expect(await server.ctx.db.select().from(schema.bookings).where(eq(schema.bookings.itemId, deployment))).toEqual([]);
    expect(await pendingJobs(body.id)).toEqual([]);
  });
});

describe('start now and the scheduler', () => {
  it('start now: the booking holds at once, the desktop starts, is warned at −15 and −5 and stopped at the end', async () => {
    const now = clock.now();
    const end = formatBookingDate(new Date(Math.floor(now.getTime() / MIN) * MIN + 30 * MIN));
    const bad = await book(uma, { start: formatBookingDate(now), end: formatBookingDate(new Date(now.getTime() + 90 * MIN)), now: true });
    await expectCode(bad, 428, 'bookings_max_time_reached');
    const { status, body } = await json(await book(uma, { start: formatBookingDate(now), end, now: true }));
    expect(status).toBe(200);
    expect(body.in_progress).toBe(true);
    expect((await row(gpuDesktop)).bookingId).toBe(body.id);
    expect(await desktopView(uma, gpuDesktop)).toMatchObject({ booking_id: body.id, scheduled: { shutdown: end } });

    const socket = await socketOf(server, uma);
    const msgs = recordEvents(socket, ['msg']);
    expect((await start(uma, gpuDesktop)).status).toBe(200);
    await until('started', async () => (await row(gpuDesktop)).status === 'Started', 60_000);
    // Deleting a booking in progress needs the desktop stopped.
    await expectCode(await del(uma, body.id), 409, 'booking_desktop_delete_stop');

    await tick(14);
    await tick(1); // end − 15
    await until('first warning', async () => msgs.length >= 1);
    expect(msgs[0]!.payload).toEqual({
      type: 'warning', msg_code: 'booking-end', params: { date: end, minutes: 15, name: 'GPU desktop', desktop_id: gpuDesktop },
    });
    await tick(10); // end − 5
    await until('second warning', async () => msgs.length >= 2);
    expect(msgs[1]!.payload).toMatchObject({ type: 'danger', params: { minutes: 5 } });
    await tick(5); // the end
    expect((await row(gpuDesktop)).bookingId).toBeNull();
    await until('stopped at the end', async () => (await row(gpuDesktop)).status === 'Stopped', 60_000);
    socket.close();
    await expectCode(await start(uma, gpuDesktop), 428, 'desktop_not_booked');
  });

  it('changing the desktop’s profile deletes its bookings', async () => {
    const { body } = await json(await bookAt(uma, 24 * 60, 24 * 60 + 30));
    expect(body.id).toBeTruthy();
    const res = await call(server, `/api/v3/domain/reservables/${gpuDesktop}`, { token: uma, method: 'PUT', body: { vgpus: ['NVIDIA-A40-4Q'] } });
    expect(res.status).toBe(200);
    expect(await server.ctx.db.select().from(schema.bookings).where(and(eq(schema.bookings.itemId, gpuDesktop)))).toEqual([]);
    expect(await pendingJobs(body.id)).toEqual([]);
    // With 4Q not planned now, start-now says the plan does not match; nothing can start now after the plans.
    await expectCode(await call(server, `/api/v3/booking/max_booking_date/${gpuDesktop}`, { token: uma }), 428, 'current_plan_doesnt_match');
    await expectCode(await start(admin, gpuDesktop), 428, 'current_plan_doesnt_match');
    clock.advance(43 * 24 * 60 * MIN);
    await server.app.bookings.scheduler.idle();
    await expectCode(await call(server, '/api/v3/booking/reservables_available', { token: uma }), 428, 'no_available_profile');
  });
});
