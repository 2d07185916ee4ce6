// The bench's seeding step, run as its own process BEFORE the server under test starts (same
// DATA_DIR / DATABASE_URL): the demo organisation exactly as `npm start` makes it, then the
// bench's people, written straight into the database because making them through the API would
// take longer than the rows that measure it:
// - `bench000`…`bench499`: students (copies of student01, same password) in the group "Bench group";
// - `benchlists`: a user (copy of `user`) owning 1,000 desktops (copies of a demo desktop's record);
// - 8 desktops of each student (copies of the same record), 5,000 desktops in all for the console's list;
// - `admin` without a personal quota, as the owner of the 500-desktop deployment.
// - with BENCH_USAGE_HISTORY=1 (the `usage` row): a year of usage of 5,000 people (USAGE_PEOPLE, most of them
//   gone since: the history keeps their names) in usage_hours, then rolled up as the server does (usage_months,
//   usage_days, usage_category_hours), the roll-up's cursor left at this hour.
// Prints one JSON line: what the rows need (template id, its base disk, the group id).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { loadConfig } from '../src/config';
import { openDatabase, schema } from '../src/db';
import { seed } from '../src/seed/seed';
import { seedDemoDesktops } from '../src/seed/demo-desktops';
import { createLocalEngine } from '../src/engine';
import { ensureDemoGuest } from '../src/engine/guest-image';
import { rollupUsage } from '../src/modules/usage/rollup';
import { rowsOf } from '../src/modules/usage/query';
import { ADMIN_DESKTOPS, BENCH_GROUP, BENCH_USERS, LIST_DESKTOPS, LIST_USER, USAGE_PEOPLE, benchUsername } from './people';


const config = loadConfig();
const database = await openDatabase({ url: config.databaseUrl, dir: config.databaseUrl ? undefined : join(config.dataDir, 'db') });
try {
  const { db } = database;
  await seed(db, { demo: true, demoPassword: config.demoPassword });
  const engine = await createLocalEngine({ dataDir: config.dataDir, accel: config.accel, concurrency: 1 });
  try {
    await seedDemoDesktops(db, engine, await ensureDemoGuest(config.imagesDir));
  } finally {
    await engine.driver.close();
  }
  const byName = async (username: string) => (await db.select().from(schema.users).where(and(eq(schema.users.username, username), eq(schema.users.categoryId, 'default'))))[0]!;
  const student = await byName('student01');
  const user = await byName('user');
  const admin = await byName('admin');
  const [template] = await db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
  const [base] = await db.select().from(schema.storage).where(eq(schema.storage.kind, 'template'));

  await db.update(schema.users).set({ quota: null }).where(eq(schema.users.id, admin.id));
  await db.insert(schema.groups).values({ id: BENCH_GROUP, uid: 'bench', name: 'Bench group', description: '', categoryId: student.categoryId });
  const students = Array.from({ length: BENCH_USERS }, (_, i) => ({
    ...student, id: `bench-user-${i}`, uid: benchUsername(i), username: benchUsername(i), name: `Bench ${i}`, email: '', groupId: BENCH_GROUP, quota: null,
  }));
  for (let i = 0; i < students.length; i += 100) await db.insert(schema.users).values(students.slice(i, i + 100));

  const listUser = { ...user, id: 'bench-lists', uid: LIST_USER, username: LIST_USER, name: 'Bench lists', email: '', quota: null };
  await db.insert(schema.users).values(listUser);
  const [model] = await db.select().from(schema.domains).where(and(eq(schema.domains.userId, user.id), eq(schema.domains.kind, 'desktop'), eq(schema.domains.name, 'Demo desktop')));
  const disks = await db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, model!.id));
  const desktops = Array.from({ length: LIST_DESKTOPS }, (_, i) => ({ ...model!, id: randomUUID(), userId: listUser.id, name: `Bench desktop ${String(i).padStart(4, '0')}` }));
  // The console's list spans owners: the students get the rest, 8 each.
  const perStudent = Math.ceil((ADMIN_DESKTOPS - LIST_DESKTOPS) / BENCH_USERS);
  for (const [n, s] of students.entries()) {
    for (let k = 0; k < perStudent; k++) desktops.push({ ...model!, id: randomUUID(), userId: s.id, groupId: BENCH_GROUP, name: `Student desktop ${n}-${k}` });
  }
  for (let i = 0; i < desktops.length; i += 100) {
    const chunk = desktops.slice(i, i + 100);
    await db.insert(schema.domains).values(chunk);
    if (disks.length) await db.insert(schema.domainDisks).values(chunk.flatMap((d) => disks.map((k) => ({ ...k, domainId: d.id }))));
  }
  let usageRows = 0;
  if (process.env.BENCH_USAGE_HISTORY === '1') usageRows = await usageHistory(db);
  process.stdout.write(`${JSON.stringify({ templateId: template!.id, basePath: base!.path, group: BENCH_GROUP, usageRows })}\n`);
} finally {
  await database.close();
}

/**
 * A school year of usage, generated: on each weekday of the last 365 days, each of 5,000 people (10
 * organisations, 100 groups, 30 templates) runs their desktop with a chance of 45 %, from 8–14 h for 1–3
 * hours (each hour 20–60 minutes), signing in once; a deterministic spread (hashes of person and day).
 */
async function usageHistory(db: Awaited<ReturnType<typeof openDatabase>>['db']): Promise<number> {
  const since = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 365 * 86_400_000);
  await db.execute(sql`INSERT INTO usage_hours (hour, category_id, category_name, group_id, group_name, user_id, username, template_id, template_name,
      desktop_id, desktop_name, desktop_seconds, gpu_used_seconds, sign_ins)
    SELECT day + (((8 + (x.h % 7) + k)::int) * interval '1 hour'),
      CASE WHEN u % 10 = 0 THEN 'default' ELSE 'bench-org-' || (u % 10) END, CASE WHEN u % 10 = 0 THEN 'Default' ELSE 'School ' || (u % 10) END,
      'bench-g' || (u % 100), 'Class ' || (u % 100), 'bench-u' || u, 'person' || u, 'bench-t' || (u % 30), 'Template ' || (u % 30),
      'bench-d' || u, 'Desktop of person ' || u, (1200 + (x.h * 37 + k * 611) % 2401)::int, CASE WHEN u % 30 = 0 THEN (1200 + (x.h * 37 + k * 611) % 2401)::int ELSE 0 END,
      CASE WHEN k = 0 THEN 1 ELSE 0 END
    FROM generate_series(0, ${USAGE_PEOPLE - 1}::int) u
    CROSS JOIN generate_series(${since.toISOString()}::timestamptz, ${since.toISOString()}::timestamptz + interval '364 days', interval '1 day') AS day
    CROSS JOIN LATERAL (SELECT abs(hashtext(u || ':' || day::text)::bigint) AS h) x
    CROSS JOIN LATERAL generate_series(0, (x.h % 3)::int) k
    WHERE extract(isodow FROM day) < 6 AND x.h % 100 < 45`);
  await db.execute(sql`INSERT INTO usage_rollups (name, done_until) VALUES ('usage', ${since.toISOString()}::timestamptz)`);
  await rollupUsage({ db, log: { warn: () => {}, error: () => {} } as never }, new Date());
  await db.execute(sql`ANALYZE`);
  const [row] = await rowsOf<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM usage_hours`);
  return row?.n ?? 0;
}
