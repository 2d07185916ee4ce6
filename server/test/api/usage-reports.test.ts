import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, gte, lt } from 'drizzle-orm';
import { ZDashboardHistory, ZUsageReport, type TUsageReport } from '@vdi/contracts';
import { openDatabase, schema } from '../../src/db';
import { closeUsage, openUsage } from '../../src/modules/usage/record';
import { rollupUsage } from '../../src/modules/usage/rollup';
import { sampleMetrics } from '../../src/modules/usage/sampler';
import { recordDesktopEvent } from '../../src/modules/desktops/events';
import { call, type TestServer, startTestServer } from '../helpers/server';
import { copyUser, makeDesktop, tokenOf, userRow } from '../helpers/routes-fixtures';
import { scaled } from '../helpers/slowdown';

// Usage reports (issue 29): usage recorded at the lifecycle's events, rolled up per hour (idempotent:
// nothing counted twice across runs, restarts or processes; the hour under way counts), and the
// console's report API (admins all, managers their organisation; a period over ten years refused;
// an empty period zeros; a deleted user's hours kept; each part as CSV).

const A = '/api/v3/admin/reports/usage';
let server: TestServer;
let admin: string;
let manager: string;
let labManager: string;

const at = (s: string) => new Date(`2026-03-02T${s}:00Z`);
const secondsOf = async (desktopId: string) =>
  Object.fromEntries(
    (await server.ctx.db.select().from(schema.usageHours).where(eq(schema.usageHours.desktopId, desktopId))).map((r) => [r.hour.toISOString().slice(11, 16), r.desktopSeconds]),
  );
const report = async (token: string, query: string): Promise<TUsageReport> => {
  const res = await call(server, `${A}?${query}`, { token });
  expect(res.status, await res.clone().text()).toBe(200);
  return ZUsageReport.parse(await res.json());
};

beforeAll(async () => {
  server = await startTestServer();
  const base = await userRow(server, 'student01');
  await server.ctx.db.insert(schema.users).values({ ...base, id: 'usage-lab-manager', uid: 'usagelabmanager', username: 'usagelabmanager', name: 'Lab manager', email: '', categoryId: 'lab', groupId: 'lab-default', roleId: 'manager' });
  [admin, manager, labManager] = await Promise.all([tokenOf(server, 'admin', 'default'), tokenOf(server, 'manager', 'default'), tokenOf(server, 'usagelabmanager', 'lab')]);
}, scaled(120_000));
afterAll(async () => server?.close());

describe('the hourly roll-up', () => {
  it('counts a desktop running across hours once, however often it runs, and the hour under way', async () => {
    const owner = await userRow(server, 'user');
    const d = await makeDesktop(server, owner, { name: 'Across hours', status: 'Started' });
    await openUsage(server.ctx, d.id, at('10:30'));
    await openUsage(server.ctx, d.id, at('10:40')); // the same start told twice: one interval
    expect(await rollupUsage(server.ctx, at('11:15'))).toBe(true);
    expect(await secondsOf(d.id)).toEqual({ '10:00': 1800, '11:00': 900 });
    // Again at the same moment, and as a restarted process would (its cursor back before the hours): the same.
    await rollupUsage(server.ctx, at('11:15'));
    await server.ctx.db.update(schema.usageRollups).set({ doneUntil: at('08:00') });
    await rollupUsage(server.ctx, at('11:15'));
    expect(await secondsOf(d.id)).toEqual({ '10:00': 1800, '11:00': 900 });
    await rollupUsage(server.ctx, at('11:45'));
    expect(await secondsOf(d.id)).toEqual({ '10:00': 1800, '11:00': 2700 });
    await closeUsage(server.ctx, d.id, at('12:10'));
    await server.ctx.db.update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, d.id));
    await rollupUsage(server.ctx, at('13:05'));
    expect(await secondsOf(d.id)).toEqual({ '10:00': 1800, '11:00': 3600, '12:00': 600 });
    const [row] = await server.ctx.db.select().from(schema.usageHours).where(and(eq(schema.usageHours.desktopId, d.id), eq(schema.usageHours.hour, at('10:00'))));
    expect(row).toMatchObject({ username: 'user', desktopName: 'Across hours', categoryId: 'default', templateName: 'Demo Linux' });
  });

  it('is opened and closed by the lifecycle\'s events; an interval whose machine cannot run any more is closed', async () => {
    const owner = await userRow(server, 'user');
    const d = await makeDesktop(server, owner, { status: 'Started' });
    await recordDesktopEvent(server.ctx, d.id, 'started');
    const open = () => server.ctx.db.select().from(schema.usageIntervals).where(eq(schema.usageIntervals.desktopId, d.id));
    expect((await open()).map((i) => i.endedAt)).toEqual([null]);
    await recordDesktopEvent(server.ctx, d.id, 'stopped');
    expect((await open())[0]!.endedAt).toBeInstanceOf(Date);
    // A start whose stop was never told (its process died) and the desktop stopped meanwhile: closed by the next roll-up.
    await recordDesktopEvent(server.ctx, d.id, 'started');
    await server.ctx.db.update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, d.id));
    await rollupUsage(server.ctx);
    expect((await open()).every((i) => i.endedAt !== null)).toBe(true);
  });

  // Several processes share PostgreSQL only (the embedded database has one).
  if (process.env.TEST_DATABASE_URL) it('run by two processes at once on PostgreSQL, counts once', async () => {
    const owner = await userRow(server, 'user');
    const d = await makeDesktop(server, owner, { status: 'Started' });
    await openUsage(server.ctx, d.id, new Date('2026-04-01T09:00:00Z'));
    await closeUsage(server.ctx, d.id, new Date('2026-04-01T11:30:00Z'));
    await server.ctx.db.update(schema.usageRollups).set({ doneUntil: new Date('2026-04-01T00:00:00Z') });
    const other = await openDatabase({ url: server.dbUrl! });
    try {
      const ran = await Promise.all([rollupUsage(server.ctx, new Date('2026-04-01T12:00:00Z')), rollupUsage({ db: other.db, log: server.ctx.log }, new Date('2026-04-01T12:00:00Z'))]);
      expect(ran.filter(Boolean).length).toBeGreaterThanOrEqual(1);
      await rollupUsage({ db: other.db, log: server.ctx.log }, new Date('2026-04-01T12:00:00Z'));
    } finally {
      await other.close();
    }
    expect(await secondsOf(d.id)).toEqual({ '09:00': 3600, '10:00': 3600, '11:00': 1800 });
  });
});

describe('GET /admin/reports/usage', () => {
  let deletedDesktop = '';
  beforeAll(async () => {
    // A person of Default who ran a desktop on 2026-03-02 and was then deleted, with the desktop.
    const gone = await copyUser(server, { username: 'user' }, 'usagegone');
    const d = await makeDesktop(server, gone, { name: 'Gone desktop', status: 'Started' });
    deletedDesktop = d.id;
    await openUsage(server.ctx, d.id, at('14:00'));
    await closeUsage(server.ctx, d.id, at('15:00'));
    await server.ctx.db.delete(schema.domains).where(eq(schema.domains.id, d.id));
    // (The cursor back to that day: the previous test rolled up to this day.)
    await server.ctx.db.update(schema.usageRollups).set({ doneUntil: at('14:00') });
    await rollupUsage(server.ctx, at('15:30'));
    await server.ctx.db.delete(schema.storage).where(eq(schema.storage.userId, gone.id)).catch(() => undefined);
    await server.ctx.db.delete(schema.users).where(eq(schema.users.id, gone.id));
  });

  it('answers desktop hours per grouping, the peak of concurrent desktops, top templates; a deleted user still counted', async () => {
    const byUser = await report(admin, 'from=2026-03-02&to=2026-03-02&group_by=user');
    expect(byUser.step).toBe('hour');
    const hoursOf = (name: string) => byUser.rows.find((r) => r.name === name)?.desktop_hours;
    expect(hoursOf('user')).toBeCloseTo(6000 / 3600, 2);
    expect(hoursOf('usagegone')).toBe(1);
    expect(byUser.totals.desktop_hours).toBeCloseTo(6000 / 3600 + 1, 1);
    // The peak to the minute: one desktop at once, first at 10:30.
    expect(byUser.peak).toEqual({ desktops: 1, at: '2026-03-02T10:30:00.000Z' });
    expect(byUser.concurrency.find((c) => c.at === '2026-03-02T10:00:00Z')?.desktops).toBe(0.5);
    expect(byUser.top_templates[0]).toMatchObject({ name: 'Demo Linux', desktops: 2 });
    const byOrg = await report(admin, 'from=2026-03-01&to=2026-03-31&group_by=organisation');
    expect(byOrg.step).toBe('day');
    expect(byOrg.rows).toEqual([expect.objectContaining({ key: 'default', desktop_hours: byUser.totals.desktop_hours })]);
    expect(byOrg.hours).toEqual([expect.objectContaining({ at: '2026-03-02T00:00:00Z', desktop_hours: byUser.totals.desktop_hours })]);
    expect(deletedDesktop).not.toBe('');
  });

  it('finds the peak of concurrent desktops to the minute: two at once for ten minutes, a desktop started as another stops is not two', async () => {
    const owner = await userRow(server, 'user');
    const day = (hm: string) => new Date(`2026-03-05T${hm}:00Z`);
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => makeDesktop(server, owner, { status: 'Started' })));
    await openUsage(server.ctx, a!.id, day('09:00'));
    await openUsage(server.ctx, b!.id, day('09:40'));
    await closeUsage(server.ctx, a!.id, day('09:50'));
    await closeUsage(server.ctx, b!.id, day('10:20'));
    await openUsage(server.ctx, c!.id, day('10:20'));
    await closeUsage(server.ctx, c!.id, day('11:10'));
    await server.ctx.db.update(schema.usageRollups).set({ doneUntil: day('00:00') });
    await rollupUsage(server.ctx, day('10:30'));
    // Rolled up again later and from an older cursor (a restart): the same peaks, the 11:00 hour added.
    await rollupUsage(server.ctx, day('12:00'));
    await server.ctx.db.update(schema.usageRollups).set({ doneUntil: day('00:00') });
    await rollupUsage(server.ctx, day('12:00'));
    const r = await report(admin, 'from=2026-03-05&to=2026-03-05');
    expect(r.peak).toEqual({ desktops: 2, at: '2026-03-05T09:40:00.000Z' });
    // The hourly averages would say 1.17 at 09:00: the series stays the hours' averages.
    expect(r.concurrency.find((x) => x.at === '2026-03-05T09:00:00Z')?.desktops).toBeCloseTo(70 / 60, 2);
    // Beside each step's average, the most at once in it.
    expect(r.concurrency.filter((x) => x.at.startsWith('2026-03-05')).map((x) => [x.at.slice(11, 16), x.peak])).toEqual([['09:00', 2], ['10:00', 1], ['11:00', 1]]);
    const csv = await (await call(server, `${A}/csv?from=2026-03-05&to=2026-03-05&part=concurrency`, { token: admin })).text();
    expect(csv.replace(/^\uFEFF/, '').split('\r\n').slice(0, 2)).toEqual(['at,concurrent_desktops,most_at_once', `2026-03-05T09:00:00Z,${r.concurrency[0]!.desktops},2`]);
    const peaks = await server.ctx.db.select().from(schema.usagePeakHours).where(and(eq(schema.usagePeakHours.categoryId, '*'), gte(schema.usagePeakHours.hour, day('00:00')), lt(schema.usagePeakHours.hour, day('23:59'))));
    expect(Object.fromEntries(peaks.map((p) => [p.hour.toISOString().slice(11, 16), [p.desktops, p.at.toISOString().slice(11, 16)]]))).toEqual({
      '09:00': [2, '09:40'],
      '10:00': [1, '10:00'],
      '11:00': [1, '11:00'],
    });
    // Its organisation's manager sees the same; another organisation's, none.
    expect((await report(manager, 'from=2026-03-05&to=2026-03-05')).peak).toEqual(r.peak);
    expect((await report(labManager, 'from=2026-03-05&to=2026-03-05')).peak).toBeNull();
    for (const d of [a, b, c]) await server.ctx.db.update(schema.domains).set({ status: 'Stopped' }).where(eq(schema.domains.id, d!.id));
  });

  it('samples the storage used over time: per day and group as last read, the most of each step; managers their organisation', async () => {
    const owner = await copyUser(server, { username: 'user' }, 'usagestore');
    const d = await makeDesktop(server, owner, { name: 'Storage desk' });
    const [{ storageId }] = await server.ctx.db.select({ storageId: schema.domainDisks.storageId }).from(schema.domainDisks).where(eq(schema.domainDisks.domainId, d.id));
    const GiB = 1024 ** 3;
    const size = (bytes: number) => server.ctx.db.update(schema.storage).set({ actualSize: bytes }).where(eq(schema.storage.id, storageId!));
    await size(5 * GiB);
    await rollupUsage(server.ctx, new Date('2026-03-06T10:00:00Z'));
    await size(9 * GiB);
    await rollupUsage(server.ctx, new Date('2026-03-07T09:00:00Z'));
    await size(7 * GiB); // the day's last reading counts for the day
    await rollupUsage(server.ctx, new Date('2026-03-07T10:00:00Z'));
    const bytesOf = (r: TUsageReport, name: string) => r.storage.rows.find((x) => x.name === name)?.bytes;
    const byUser = await report(admin, 'from=2026-03-06&to=2026-03-10&group_by=user');
    expect(byUser.storage.day).toBe('2026-03-07');
    expect(bytesOf(byUser, 'usagestore')).toBe(7 * GiB);
    expect(bytesOf(await report(admin, 'from=2026-03-06&to=2026-03-06&group_by=user'), 'usagestore')).toBe(5 * GiB);
    // Over time: per day the most of its hours (09:00 read 9 GiB on the 7th); per hour for a short period.
    const [p6, p7] = byUser.storage.points;
    expect([p6?.at, p7?.at]).toEqual(['2026-03-06T00:00:00Z', '2026-03-07T00:00:00Z']);
    expect(p7!.bytes - p6!.bytes).toBe(4 * GiB);
    expect(byUser.storage.bytes).toBe(byUser.storage.rows.reduce((sum, x) => sum + x.bytes, 0));
    // Sliced as the other reports: per template (the desktop's template; a template's own disk under itself), per organisation.
    const byTemplate = await report(admin, 'from=2026-03-07&to=2026-03-07&group_by=template');
    expect(byTemplate.storage.rows.find((x) => x.key === d.templateId)!.bytes).toBeGreaterThanOrEqual(7 * GiB);
    const byOrg = await report(admin, 'from=2026-03-07&to=2026-03-07&group_by=organisation');
    expect(byOrg.storage.rows.find((x) => x.key === 'default')!.bytes).toBeGreaterThanOrEqual(7 * GiB);
    expect(byOrg.storage.points.map((x) => x.at)).toEqual(['2026-03-07T09:00:00Z', '2026-03-07T10:00:00Z']);
    // A manager: their organisation only; another organisation's manager does not see it.
    expect(bytesOf(await report(manager, 'from=2026-03-07&to=2026-03-07&group_by=user'), 'usagestore')).toBe(7 * GiB);
    const lab = await report(labManager, 'from=2026-03-07&to=2026-03-07&group_by=user');
    expect(bytesOf(lab, 'usagestore')).toBeUndefined();
    expect(lab.storage.rows.every((x) => x.key !== owner.id)).toBe(true);
    // A period before any sample: nothing, no day.
    expect((await report(admin, 'from=2001-01-01&to=2001-01-31')).storage).toEqual({ day: null, bytes: 0, points: [], rows: [] });
    // As CSV: over time and per group.
    const csv = async (part: string) => (await (await call(server, `${A}/csv?from=2026-03-06&to=2026-03-07&group_by=user&part=${part}`, { token: admin })).text()).replace(/^\uFEFF/, '').trim().split('\r\n');
    expect((await csv('storage'))[0]).toBe('at,storage_bytes');
    expect(await csv('storage')).toContain(`2026-03-06T10:00:00Z,${p6!.bytes}`);
    const byGroup = await csv('storage_by_group');
    expect(byGroup[0]).toBe('user,name,storage_bytes');
    expect(byGroup).toContain(`${owner.id},usagestore,${7 * GiB}`);
  });

  it('counts GPU hours booked (units × time) and used (a desktop with a GPU profile running)', async () => {
    const owner = await userRow(server, 'user');
    const d = await makeDesktop(server, owner, { name: 'GPU desk', status: 'Started' });
    await server.ctx.db.insert(schema.bookings).values({ id: `usage-booking-${d.id}`, itemType: 'desktop', itemId: d.id, userId: owner.id, units: 2, reservables: { vgpus: ['nvidia-a16-2q'] }, start: new Date('2026-03-03T10:00:00Z'), end: new Date('2026-03-03T12:00:00Z') });
    await server.ctx.db.update(schema.domains).set({ hardware: { ...d.hardware, reservables: { vgpus: ['nvidia-a16-2q'] } } }).where(eq(schema.domains.id, d.id));
    await openUsage(server.ctx, d.id, new Date('2026-03-03T10:30:00Z'));
    await closeUsage(server.ctx, d.id, new Date('2026-03-03T11:30:00Z'));
    await server.ctx.db.update(schema.usageRollups).set({ doneUntil: new Date('2026-03-03T00:00:00Z') });
    await rollupUsage(server.ctx, new Date('2026-03-03T13:00:00Z'));
    const r = await report(admin, 'from=2026-03-03&to=2026-03-03&group_by=user');
    expect(r.totals).toMatchObject({ gpu_booked_hours: 4, gpu_used_hours: 1, desktop_hours: 1 });
    expect(r.hours.reduce((sum, h) => sum + h.gpu_booked_hours, 0)).toBe(4);
    await server.ctx.db.delete(schema.bookings).where(eq(schema.bookings.id, `usage-booking-${d.id}`));
  });

  it('managers see their organisation only; another one named is forbidden', async () => {
    expect((await report(manager, 'from=2026-03-02&to=2026-03-02')).totals.desktop_hours).toBeGreaterThan(2);
    const lab = await report(labManager, 'from=2026-03-02&to=2026-03-02');
    expect(lab.totals).toEqual({ desktop_hours: 0, gpu_booked_hours: 0, gpu_used_hours: 0, sign_ins: 0 });
    expect((await call(server, `${A}?from=2026-03-02&to=2026-03-02&category=default`, { token: labManager })).status).toBe(403);
    expect((await report(admin, 'from=2026-03-02&to=2026-03-02&category=lab')).rows).toEqual([]);
  });

  it('counts sign-ins per day', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const r = await report(admin, `from=${today}&to=${today}&group_by=user`);
    expect(r.totals.sign_ins).toBeGreaterThanOrEqual(3);
    expect(r.sign_ins[0]?.day).toBe(today);
  });

  it('an empty period answers zeros; over ten years, reversed or bad input is refused with a code', async () => {
    const empty = await report(admin, 'from=2001-01-01&to=2001-12-31&group_by=template');
    expect(empty).toMatchObject({ rows: [], hours: [], concurrency: [], peak: null, sign_ins: [], top_templates: [], storage: { day: null, bytes: 0, points: [], rows: [] } });
    expect(empty.totals.desktop_hours).toBe(0);
    const code = async (q: string) => {
      const res = await call(server, `${A}?${q}`, { token: admin });
      expect(res.status).toBe(400);
      return ((await res.json()) as { description_code: string }).description_code;
    };
    expect(await code('from=2016-01-01&to=2026-01-01')).toBe('report_period_too_long');
    expect(await code('from=2026-02-01&to=2026-01-01')).toBe('report_period_invalid');
    expect(await code('from=2026-01-01&to=2026-01-31&group_by=planet')).toBe('validation_error');
    expect(await code('from=yesterday&to=2026-01-31')).toBe('validation_error');
    expect((await call(server, `${A}?from=2016-01-02&to=2026-01-01`, { token: admin })).status).toBe(200);
  });

  it('exports each part as CSV', async () => {
    const res = await call(server, `${A}/csv?from=2026-03-02&to=2026-03-02&group_by=user&part=desktop_hours`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/csv');
    expect(res.headers.get('content-disposition')).toContain('usage-desktop_hours-2026-03-02-2026-03-02.csv');
    const text = await res.text();
    const lines = text.replace(/^\uFEFF/, '').trim().split('\r\n');
    expect(lines[0]).toBe('user,name,desktop_hours,gpu_booked_hours,gpu_used_hours,sign_ins');
    expect(lines.some((l) => l.includes(',usagegone,1,'))).toBe(true);
    for (const part of ['concurrency', 'gpu', 'sign_ins', 'top_templates', 'storage', 'storage_by_group']) {
      const r = await call(server, `${A}/csv?from=2026-03-02&to=2026-03-02&part=${part}`, { token: manager });
      expect(r.status).toBe(200);
      expect((await r.text()).split('\r\n').length).toBeGreaterThan(1);
    }
    expect((await call(server, `${A}/csv?from=2026-03-02&to=2026-03-02&part=everything`, { token: admin })).status).toBe(400);
  });
});

describe('the dashboard\'s history', () => {
  it('one row a minute however many sample it; the last hour for admins, a manager\'s organisation only', async () => {
    const owner = await userRow(server, 'user');
    await makeDesktop(server, owner, { status: 'Started' });
    const lab = await copyUser(server, { username: 'usagelabmanager', categoryId: 'lab' }, 'usagelabowner');
    await makeDesktop(server, lab, { status: 'Started' });
    const now = new Date();
    const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
    // (The server's own sampler may have written this minute before these desktops ran.)
    await server.ctx.db.delete(schema.metricSamples).where(eq(schema.metricSamples.at, minute));
    const ran = await Promise.all([sampleMetrics(server.ctx, now), sampleMetrics(server.ctx, now)]);
    expect(ran.filter(Boolean).length).toBeLessThanOrEqual(1);
    expect(await sampleMetrics(server.ctx, now)).toBe(false);
    const rows = await server.ctx.db.select().from(schema.metricSamples).where(eq(schema.metricSamples.at, minute));
    expect(rows).toHaveLength(1);
    const history = async (token: string, range: string) => {
      const res = await call(server, `/api/v3/admin/dashboard/history?range=${range}`, { token });
      expect(res.status).toBe(200);
      return ZDashboardHistory.parse(await res.json());
    };
    const all = await history(admin, 'hour');
    const point = all.points.find((p) => p.at === minute.toISOString());
    expect(point?.running).toBe(Object.values(rows[0]!.running).reduce((a, b) => a + b, 0));
    expect(point?.queued).toBe(rows[0]!.queued);
    expect(all.hypervisors.length).toBeGreaterThan(0);
    const mine = await history(labManager, 'day');
    expect(mine.hypervisors).toEqual([]);
    expect(mine.points.find((p) => p.at === new Date(Math.floor(now.getTime() / 300_000) * 300_000).toISOString())).toMatchObject({ running: rows[0]!.running.lab, queued: null });
    expect(rows[0]!.running.lab).toBeGreaterThanOrEqual(1);
    expect((await call(server, '/api/v3/admin/dashboard/history?range=week', { token: admin })).status).toBe(400);
  });
});
