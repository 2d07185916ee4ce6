// The bench's seeding step, run as its own process BEFORE the server under test starts (same
// DATA_DIR / DATABASE_URL): the demo organisation exactly as `npm start` makes it, then the
// bench's people, written straight into the database because making them through the API would
// take longer than the rows that measure it:
// - `bench000`…`bench499`: students (copies of student01, same password) in the group "Bench group";
// - `benchlists`: a user (copy of `user`) owning 1,000 desktops (copies of a demo desktop's record);
// - 8 desktops of each student (copies of the same record), 5,000 desktops in all for the console's list;
// - `admin` without a personal quota, as the owner of the 500-desktop deployment.
// Prints one JSON line: what the rows need (template id, its base disk, the group id).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { loadConfig } from '../src/config';
import { openDatabase, schema } from '../src/db';
import { seed } from '../src/seed/seed';
import { seedDemoDesktops } from '../src/seed/demo-desktops';
import { createLocalEngine } from '../src/engine';
import { ensureDemoGuest } from '../src/engine/guest-image';
import { ADMIN_DESKTOPS, BENCH_GROUP, BENCH_USERS, LIST_DESKTOPS, LIST_USER, benchUsername } from './people';


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
  process.stdout.write(`${JSON.stringify({ templateId: template!.id, basePath: base!.path, group: BENCH_GROUP })}\n`);
} finally {
  await database.close();
}
