import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { formatBookingDate } from '@vdi/contracts';
import { schema } from '../../src/db';
import { seed } from '../../src/seed/seed';
import { manualClock, type ManualClock } from '../../src/scheduler/clock';
import { call, DEMO_PASSWORD, startTestServer, type TestServer } from '../helpers/server';
import { copyUser, tokenOf, userRow } from '../helpers/routes-fixtures';
import { recordEvents, socketOf, until } from '../helpers/wait';
import { viewerOpened } from '../../src/modules/viewers/activity';

// The console's GPU cards and profiles, booking priority rules and auto-shutdown policies
// (issue 13): per role (admin, manager of the category, manager of another category, advanced,
// user); the planner offers a new card's profiles at once; a booking follows a rule changed a
// moment before; a policy of 2 minutes idle stops a real desktop after warning its owner.

const MIN = 60_000;
let server: TestServer;
let clock: ManualClock;
const T = {} as Record<'admin' | 'manager' | 'labManager' | 'advanced' | 'user', string>;
let gpuDesktop: string;
let plainDesktop: string;

beforeAll(async () => {
  clock = manualClock(new Date());
  server = await startTestServer({ clock, env: { SHUTDOWN_TIMEOUT_SECONDS: '5' }, startConcurrency: 1 });
  const lab = await copyUser(server, { username: 'manager' }, 'labmanager');
  await server.ctx.db.update(schema.users).set({ categoryId: 'lab', groupId: 'lab-default' }).where(eq(schema.users.id, lab.id));
  [T.admin, T.manager, T.labManager, T.advanced, T.user] = await Promise.all([
    tokenOf(server, 'admin'), tokenOf(server, 'manager'), tokenOf(server, 'labmanager', 'lab'), tokenOf(server, 'advanced'), tokenOf(server, 'user'),
  ]);
  const list = await (await call(server, '/api/v3/user/desktops', { token: T.user })).json();
  gpuDesktop = list.find((d: { name: string }) => d.name === 'GPU desktop').id;
  plainDesktop = list.find((d: { name: string }) => d.name === 'Demo desktop').id;
}, scaled(120_000));
afterAll(async () => server?.close());

const A = '/api/v3/admin';
const json = async (r: Response) => ({ status: r.status, body: await r.json() });
const expectCode = async (r: Response, status: number, code: string) => {
  const body = await r.json();
  expect({ status: r.status, code: body.description_code }).toEqual({ status, code });
  return body;
};
const req = (token: string, path: string, method = 'GET', body?: unknown) => call(server, `${A}${path}`, { token, method, body });
const row = async (id: string) => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0]!;
const tick = async (minutes: number) => {
  clock.advance(minutes * MIN);
  await server.app.bookings.scheduler.idle();
};

describe('GPU cards and profiles', () => {
  it('are for admins only: managers (any category), advanced users and users get 403', async () => {
    for (const token of [T.manager, T.labManager, T.advanced, T.user]) {
      await expectCode(await req(token, '/reservables/gpus'), 403, 'forbidden');
      await expectCode(await req(token, '/reservables/gpus', 'POST', { name: 'Nope' }), 403, 'forbidden');
      await expectCode(await req(token, '/reservables/gpus/demo-nvidia-a40', 'DELETE'), 403, 'forbidden');
      await expectCode(await req(token, '/reservables/gpus/demo-nvidia-a40/subitems', 'POST', { profile: '1Q', name: 'x', units: 1 }), 403, 'forbidden');
    }
  });

  it('an admin adds a card with two profiles; the planner offers them at once and plans them', async () => {
    const { status, body: card } = await json(await req(T.admin, '/reservables/gpus', 'POST', { name: 'NVIDIA L4 #1', brand: 'NVIDIA', model: 'L4', description: 'Bench' }));
    expect(status).toBe(200);
    expect(card).toMatchObject({ name: 'NVIDIA L4 #1', brand: 'NVIDIA', model: 'L4', enabled: true, subitems: [], plans: 0, bookings: 0 });
    await req(T.admin, `/reservables/gpus/${card.id}/subitems`, 'POST', { profile: '2Q', name: 'L4 · 2 GB', units: 12 });
    const { body: withTwo } = await json(await req(T.admin, `/reservables/gpus/${card.id}/subitems`, 'POST', { profile: '4Q', name: 'L4 · 4 GB', units: 6, description: 'Video' }));
    expect(withTwo.subitems.map((s: { id: string; units: number }) => [s.id, s.units])).toEqual([['NVIDIA-L4-2Q', 12], ['NVIDIA-L4-4Q', 6]]);
    // The planner's calls see it at once.
    const kinds = await (await req(T.admin, '/reservables')).json();
    expect(kinds).toEqual(['gpus']);
    const enabled = await (await req(T.admin, `/reservables/enabled/gpus/${card.id}`)).json();
    expect(enabled.map((s: { id: string }) => s.id)).toEqual(['NVIDIA-L4-2Q', 'NVIDIA-L4-4Q']);
    const start = new Date(Math.ceil(clock.now().getTime() / (60 * MIN)) * 60 * MIN + 24 * 60 * MIN);
    const plan = await json(
      await call(server, '/api/v3/admin/reservables_planner', {
        token: T.admin,
        body: { item_type: 'gpus', item_id: card.id, subitem_id: 'NVIDIA-L4-4Q', start: formatBookingDate(start), end: formatBookingDate(new Date(start.getTime() + 7 * 24 * 60 * MIN)) },
      }),
    );
    expect(plan.status).toBe(200);
    expect(plan.body).toMatchObject({ subitem_id: 'NVIDIA-L4-4Q', units: 6 });
    // Edit a profile and the card; the audit log has every write.
    const { body: edited } = await json(await req(T.admin, `/reservables/gpus/${card.id}/subitems/NVIDIA-L4-2Q`, 'PUT', { units: 16, description: 'Office' }));
    expect(edited.subitems[0]).toMatchObject({ id: 'NVIDIA-L4-2Q', units: 16, description: 'Office' });
    expect((await json(await req(T.admin, `/reservables/gpus/${card.id}`, 'PUT', { name: 'NVIDIA L4 #A' }))).body.name).toBe('NVIDIA L4 #A');
    const actions = (await server.ctx.db.select().from(schema.auditLog).where(eq(schema.auditLog.objectId, card.id))).map((a) => a.action).sort();
    expect(actions).toEqual(['reservable.create', 'reservable.profile_add', 'reservable.profile_add', 'reservable.profile_update', 'reservable.update']);
    // Removing a profile takes its plans (and their boundary jobs) with it; then the card goes.
    const { body: left } = await json(await req(T.admin, `/reservables/gpus/${card.id}/subitems/NVIDIA-L4-4Q`, 'DELETE'));
    expect(left.subitems.map((s: { id: string }) => s.id)).toEqual(['NVIDIA-L4-2Q']);
    expect(left.plans).toBe(0);
    expect(await server.app.bookings.scheduler.pending(`plan:${plan.body.id}`)).toEqual([]);
    expect((await req(T.admin, `/reservables/gpus/${card.id}`, 'DELETE')).status).toBe(200);
    expect(await server.ctx.db.select().from(schema.reservableSubitems).where(eq(schema.reservableSubitems.id, 'NVIDIA-L4-2Q'))).toEqual([]);
    await expectCode(await req(T.admin, `/reservables/gpus/${card.id}`, 'DELETE'), 404, 'reservable_item_not_found');
  });

  it('refuses to remove what bookings or desktops still use', async () => {
    // user's GPU desktop asks for NVIDIA-A40-2Q, offered only by the demo card.
    const cards = await (await req(T.admin, '/reservables/gpus')).json();
    const demo = cards.find((c: { id: string }) => c.id === 'demo-nvidia-a40');
    expect(demo.subitems.map((s: { id: string; desktops: number }) => [s.id, s.desktops])).toEqual([['NVIDIA-A40-2Q', 1], ['NVIDIA-A40-4Q', 0]]);
    await expectCode(await req(T.admin, '/reservables/gpus/demo-nvidia-a40/subitems/NVIDIA-A40-2Q', 'DELETE'), 409, 'reservable_in_use');
    const start = new Date(Math.ceil(clock.now().getTime() / (60 * MIN)) * 60 * MIN + 2 * 60 * MIN);
    const booked = await json(
      await call(server, '/api/v3/booking/event', {
        token: T.user,
        body: { element_id: gpuDesktop, element_type: 'desktop', start: formatBookingDate(start), end: formatBookingDate(new Date(start.getTime() + 30 * MIN)) },
      }),
    );
    expect(booked.status).toBe(200);
    const refusal = await expectCode(await req(T.admin, '/reservables/gpus/demo-nvidia-a40', 'DELETE'), 409, 'reservable_has_bookings');
    expect(refusal.params).toEqual({ bookings: 1 });
    await expectCode(await req(T.admin, '/reservables/gpus/demo-nvidia-a40/subitems/NVIDIA-A40-2Q', 'DELETE'), 409, 'reservable_has_bookings');
    expect((await call(server, `/api/v3/booking/event/${booked.body.id}`, { token: T.user, method: 'DELETE' })).status).toBe(200);
  });
});

describe('booking priority rules', () => {
  const priorityOf = async () => (await call(server, `/api/v3/bookings/priority/desktop/${gpuDesktop}`, { token: T.user })).json();
  const book = (fromMin: number, toMin: number) => {
    const base = Math.ceil(clock.now().getTime() / (60 * MIN)) * 60 * MIN + 3 * 60 * MIN;
    return call(server, '/api/v3/booking/event', {
      token: T.user,
      body: { element_id: gpuDesktop, element_type: 'desktop', start: formatBookingDate(new Date(base + fromMin * MIN)), end: formatBookingDate(new Date(base + toMin * MIN)) },
    });
  };

  it('are for admins only', async () => {
    for (const token of [T.manager, T.labManager, T.advanced, T.user]) {
      await expectCode(await req(token, '/booking_priorities'), 403, 'forbidden');
      await expectCode(await req(token, '/booking_priorities/default', 'PUT', { max_time: 5 }), 403, 'forbidden');
    }
    const { body } = await json(await req(T.admin, '/booking_priorities'));
    expect(body.items.map((r: { id: string; profiles: string[] }) => [r.id, r.profiles])).toEqual([
      ['default', ['NVIDIA-A40-2Q', 'NVIDIA-A40-4Q']],
      ['default-admins', ['NVIDIA-A40-2Q', 'NVIDIA-A40-4Q']],
    ]);
  });

  it("a rule for the user role applies to that user's next booking at once", async () => {
    expect(await priorityOf()).toMatchObject({ max_time: 60, max_items: 1, forbid_time: 0 });
    const { status, body: rule } = await json(
      await req(T.admin, '/booking_priorities', 'POST', { name: 'Students', allowed: { roles: ['user'] }, priority: 10, max_time: 120, max_items: 2, forbid_time: 60 }),
    );
    expect(status).toBe(200);
    expect(await priorityOf()).toMatchObject({ max_time: 120, max_items: 2, forbid_time: 60 });
    // 90 minutes (over the old 60) and two bookings (over the old 1) are fine now.
    const first = await json(await book(0, 90));
    expect(first.status).toBe(200);
    const second = await json(await book(24 * 60, 24 * 60 + 30));
    expect(second.status).toBe(200);
    await expectCode(await book(48 * 60, 48 * 60 + 30), 428, 'booking_max_items_exceeded');
    // Tighter again: 30 minutes at most, one booking.
    await req(T.admin, `/booking_priorities/${rule.id}`, 'PUT', { max_time: 30, max_items: 3 });
    const tooLong = await json(await book(72 * 60, 72 * 60 + 45));
    expect(tooLong.status).toBeGreaterThanOrEqual(400);
    expect(tooLong.status).toBeLessThan(500);
    for (const b of [first.body, second.body]) await call(server, `/api/v3/booking/event/${b.id}`, { token: T.user, method: 'DELETE' });
    expect((await req(T.admin, `/booking_priorities/${rule.id}`, 'DELETE')).status).toBe(200);
    expect(await priorityOf()).toMatchObject({ max_time: 60, max_items: 1 });
  });

  it('keeps the last rule that profiles use, and a deleted default rule stays deleted after a restart', async () => {
    expect((await req(T.admin, '/booking_priorities/default-admins', 'DELETE')).status).toBe(200);
    const refusal = await expectCode(await req(T.admin, '/booking_priorities/default', 'DELETE'), 409, 'booking_priority_in_use');
    expect(refusal.params).toEqual({ rule_id: 'default', profiles: 2 });
    await expectCode(await req(T.admin, '/booking_priorities/nope', 'PUT', { max_time: 5 }), 404, 'booking_priority_not_found');
    // The start-up seed wrote the default rules on every start, bringing a deleted one back.
    await seed(server.ctx.db, { demo: true, demoPassword: DEMO_PASSWORD });
    expect(await server.ctx.db.select().from(schema.bookingPriorities).where(eq(schema.bookingPriorities.id, 'default-admins'))).toEqual([]);
  });
});

describe('auto-shutdown policies', () => {
  const policy = (token: string, body: Record<string, unknown>) => req(token, '/shutdown_policies', 'POST', body);

  it('admins every policy; managers their category and roles read-only; others nothing', async () => {
    for (const token of [T.advanced, T.user]) await expectCode(await req(token, '/shutdown_policies'), 403, 'forbidden');
    const role = await json(await policy(T.admin, { name: 'Advanced: 8 h', kind: 'role', target: 'advanced', max_time: 480 }));
    expect(role.status).toBe(200);
    expect(role.body).toMatchObject({ kind: 'role', target_name: expect.any(String), category: null, editable: true });
    await expectCode(await policy(T.admin, { name: 'Again', kind: 'role', target: 'advanced', max_time: 10 }), 409, 'shutdown_policy_exists');
    await expectCode(await policy(T.admin, { name: 'Ghost', kind: 'group', target: 'no-such-group', max_time: 10 }), 404, 'shutdown_policy_target_not_found');

    // The manager of Default: the role's policy read-only; policies of their groups and users.
    await expectCode(await policy(T.manager, { name: 'Mine', kind: 'role', target: 'user', max_time: 10 }), 403, 'forbidden');
    await expectCode(await req(T.manager, `/shutdown_policies/${role.body.id}`, 'PUT', { max_time: 10 }), 403, 'forbidden');
    const group = await json(await policy(T.manager, { name: 'Teachers 4 h', kind: 'group', target: 'default-teachers', max_time: 240 }));
    expect(group.status).toBe(200);
    expect(group.body).toMatchObject({ category: 'default', category_name: 'Default', target_name: 'Teachers', editable: true });
    const seen = (await json(await req(T.manager, '/shutdown_policies'))).body;
    expect(seen.items.map((p: { id: string; editable: boolean }) => [p.id, p.editable])).toEqual([[group.body.id, true], [role.body.id, false]]);
    expect((await req(T.manager, `/shutdown_policies/${group.body.id}`, 'PUT', { idle_time: 30 })).status).toBe(200);
    // Their targets in another category are refused; the other category's manager does not see theirs.
    await expectCode(await policy(T.manager, { name: 'Lab', kind: 'group', target: 'lab-default', max_time: 10 }), 403, 'forbidden');
    await expectCode(await policy(T.manager, { name: 'Lab', kind: 'category', target: 'lab', max_time: 10 }), 403, 'forbidden');
    await expectCode(await req(T.labManager, `/shutdown_policies/${group.body.id}`), 404, 'shutdown_policy_not_found');
    await expectCode(await req(T.labManager, `/shutdown_policies/${group.body.id}`, 'DELETE'), 404, 'shutdown_policy_not_found');
    const labSeen = (await json(await req(T.labManager, '/shutdown_policies'))).body;
    expect(labSeen.items.map((p: { id: string }) => p.id)).toEqual([role.body.id]);
    const labOwn = await json(await policy(T.labManager, { name: 'Lab 2 h', kind: 'category', target: 'lab', idle_time: 120 }));
    expect(labOwn.status).toBe(200);
    await expectCode(await req(T.manager, `/shutdown_policies/${labOwn.body.id}`), 404, 'shutdown_policy_not_found');

    for (const id of [group.body.id, role.body.id, labOwn.body.id]) expect((await req(T.admin, `/shutdown_policies/${id}`, 'DELETE')).status).toBe(200);
  });

  it('the longest time started shows on the card at once (the list cache follows a policy write) and stops the desktop after warnings', async () => {
    const socket = await socketOf(server, T.user);
    const msgs = recordEvents(socket, ['msg']);
    const shown = async () => (await (await call(server, '/api/v3/user/desktops', { token: T.user })).json()).find((d: { id: string }) => d.id === plainDesktop).scheduled.shutdown;
    expect((await call(server, `/api/v3/desktop/start/${plainDesktop}`, { token: T.user })).status).toBe(200);
    await until('started', async () => (await row(plainDesktop)).status === 'Started', 90_000);
    await server.app.bookings.scheduler.idle();
    expect(await shown()).toBe(false);
    const startedAt = clock.now().getTime();
    const { body: p } = await json(await policy(T.admin, { name: 'Uma: 10 min', kind: 'user', target: (await userRow(server, 'user')).id, max_time: 10, warnings: [5, 1] }));
    const deadline = await shown();
    expect(deadline).not.toBe(false);
    const at = new Date(`${String(deadline).replace('+0000', ':00Z')}`).getTime();
    expect(Math.abs(at - (startedAt + 10 * MIN))).toBeLessThan(2 * MIN);
    // A longer time moves it (the cached list answer follows).
    await req(T.admin, `/shutdown_policies/${p.id}`, 'PUT', { max_time: 20 });
    expect(await shown()).not.toBe(deadline);
    await req(T.admin, `/shutdown_policies/${p.id}`, 'PUT', { max_time: 10 });
    expect(await shown()).toBe(deadline);

    await tick(5);
    await until('first warning', async () => msgs.length >= 1);
    expect(msgs[0]!.payload).toMatchObject({ type: 'warning', msg_code: 'auto-shutdown', params: { minutes: 5, desktop_id: plainDesktop, date: deadline } });
    await tick(4);
    await until('second warning', async () => msgs.length >= 2);
    expect(msgs[1]!.payload).toMatchObject({ type: 'danger', params: { minutes: 1 } });
    await tick(2);
    await until('stopped', async () => (await row(plainDesktop)).status === 'Stopped', 90_000);
    await until('the card shows no deadline', async () => (await shown()) === false);
    const audit = await server.ctx.db.select().from(schema.auditLog).where(eq(schema.auditLog.action, 'desktop.auto_shutdown'));
    expect(audit.map((a) => [a.objectId, (a.detail as { reason: string }).reason])).toEqual([[plainDesktop, 'max_time']]);
    socket.close();
    await req(T.admin, `/shutdown_policies/${p.id}`, 'DELETE');
  }, scaled(180_000));

  it('a policy of 2 minutes idle (no viewer open) stops a real desktop after warning its owner', async () => {
    const { body: p } = await json(await policy(T.admin, { name: 'Students 1A idle', kind: 'group', target: 'default-students-1a', idle_time: 2, warnings: [1] }));
    const socket = await socketOf(server, T.user);
    const msgs = recordEvents(socket, ['msg']);
    expect((await call(server, `/api/v3/desktop/start/${plainDesktop}`, { token: T.user })).status).toBe(200);
    await until('started', async () => (await row(plainDesktop)).status === 'Started', 90_000);
    await server.app.bookings.scheduler.idle();
    expect(msgs).toEqual([]);
    // Planned when it reached Started (asynchronously): the first idle check is due a minute before the idle deadline.
    await until('idle check planned', async () => (await server.app.bookings.scheduler.pending(`autoidle:${plainDesktop}`)).length === 1);
    await tick(1);
    await until('idle warning', async () => msgs.length >= 1);
    expect(msgs[0]!.payload).toMatchObject({ type: 'danger', msg_code: 'idle-shutdown', params: { minutes: 1, desktop_id: plainDesktop, name: 'Demo desktop' } });
    expect((await row(plainDesktop)).status).toBe('Started');
    expect((await row(plainDesktop)).scheduledShutdownAt).not.toBeNull();
    await tick(1);
    await until('stopped when idle', async () => (await row(plainDesktop)).status === 'Stopped', 90_000);
    const audit = await server.ctx.db.select().from(schema.auditLog).where(eq(schema.auditLog.action, 'desktop.auto_shutdown'));
    expect(audit.map((a) => (a.detail as { reason: string }).reason)).toContain('idle');
    expect(await server.app.bookings.scheduler.pending(`autoidle:${plainDesktop}`)).toEqual([]);
    socket.close();
    await req(T.admin, `/shutdown_policies/${p.id}`, 'DELETE');
  }, scaled(180_000));

  it('a viewer open puts the idle stop off; once it closes, the idle time counts from then', async () => {
    const { body: p } = await json(await policy(T.admin, { name: 'Students 1A idle', kind: 'group', target: 'default-students-1a', idle_time: 2, warnings: [1] }));
    const socket = await socketOf(server, T.user);
    const msgs = recordEvents(socket, ['msg']);
    await until('stopped before', async () => (await row(plainDesktop)).status === 'Stopped', 90_000);
    expect((await call(server, `/api/v3/desktop/start/${plainDesktop}`, { token: T.user })).status).toBe(200);
    await until('started', async () => (await row(plainDesktop)).status === 'Started', 90_000);
    await until('idle check planned', async () => (await server.app.bookings.scheduler.pending(`autoidle:${plainDesktop}`)).length === 1);
    // What the browser viewer's bridge does when a viewer connects.
    const closeViewer = await viewerOpened(server.ctx, plainDesktop);
    try {
      for (let i = 0; i < 4; i++) await tick(1);
      expect(msgs).toEqual([]);
      expect((await row(plainDesktop)).status).toBe('Started');
    } finally {
      await closeViewer(clock.now().getTime());
    }
    const closedAt = clock.now().getTime();
    // Checks come back an idle time later while the viewer was open; the warning comes a minute before closed + 2. (Looked
    // for on the server, where the warning plans the stop: its message reaches the socket a moment later, and one more
    // minute ticked meanwhile would be the stop's.)
    for (let i = 0; i < 4 && (await row(plainDesktop)).scheduledShutdownAt === null; i++) await tick(1);
    await until('idle warning', async () => msgs.length >= 1);
    const warnedAt = clock.now().getTime();
    expect(warnedAt - closedAt).toBeGreaterThanOrEqual(MIN);
    expect(msgs[0]!.payload).toMatchObject({ msg_code: 'idle-shutdown', params: { minutes: 1 } });
    expect((await row(plainDesktop)).status).toBe('Started');
    await tick(2);
    await until('stopped when idle', async () => (await row(plainDesktop)).status === 'Stopped', 90_000);
    socket.close();
    await req(T.admin, `/shutdown_policies/${p.id}`, 'DELETE');
  }, scaled(180_000));
});
