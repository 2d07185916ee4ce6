import { randomBytes, randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { BUILT_IN_TEXTS as N, type TQuota } from '@vdi/contracts';
import { schema, type Db } from '../db';
import { hashPassword } from '../auth/passwords';
import { seedReservables } from './reservables';

export type SeededAccount = { username: string; role: string; category: string; password?: string };
export type SeedResult = { created: boolean; accounts: SeededAccount[]; registrationCode?: string };

export const DEMO_ACCOUNTS = ['admin', 'manager', 'advanced', 'user'] as const;

const ROLES = [
  { id: 'admin', name: 'Administrator', description: 'Manages the whole installation', sortOrder: 1 },
  { id: 'manager', name: 'Manager', description: 'Manages one category', sortOrder: 2 },
  { id: 'advanced', name: 'Advanced', description: 'Creates templates, media and deployments', sortOrder: 3 },
  { id: 'user', name: 'User', description: 'Uses desktops', sortOrder: 4 },
];

const quota = (q: Partial<TQuota>): TQuota => ({
  desktops: 10, volatile: 5, templates: 5, isos: 5, deployments_total: 5, deployment_desktops: 50,
  started_deployment_desktops: 20, running: 3, memory: 8, vcpus: 8, desktops_disk_size: 50,
  total_size: 100, total_soft_size: 80, storage_size: 100, media_size: 50, personal_drive: 0, ...q,
});

type DemoUser = { username: string; name: string; role: string; group: string; category?: string; secondary?: string[] };

const DEMO_GROUPS = [
  { id: 'default-default', uid: 'default', name: N.default_category, description: N.default_group_description },
  { id: 'default-teachers', uid: 'teachers', name: N.teachers, description: N.teachers_description },
  { id: 'default-students-1a', uid: 'students-1a', name: N.students_1a, description: N.students_1a_description, quota: quota({ running: 1, desktops: 4, memory: 2, vcpus: 2 }) },
  { id: 'default-students-1b', uid: 'students-1b', name: N.students_1b, description: N.students_1b_description, quota: quota({ running: 1, desktops: 3, memory: 2, vcpus: 2 }) },
];

const DEMO_USERS: DemoUser[] = [
  { username: 'admin', name: 'Ada Admin', role: 'admin', group: 'default-default' },
  { username: 'manager', name: 'Marta Manager', role: 'manager', group: 'default-default' },
  { username: 'advanced', name: 'Teo Teacher', role: 'advanced', group: 'default-teachers' },
  { username: 'user', name: 'Uma User', role: 'user', group: 'default-students-1a', secondary: ['default-students-1b'] },
  { username: 'student01', name: 'Sara Student', role: 'user', group: 'default-students-1a' },
  { username: 'student02', name: 'Pau Student', role: 'user', group: 'default-students-1a' },
  { username: 'student03', name: 'Nora Student', role: 'user', group: 'default-students-1b' },
  { username: 'student04', name: 'Iker Student', role: 'user', group: 'default-students-1b' },
  { username: 'researcher', name: 'Rui Researcher', role: 'advanced', group: 'lab-default', category: 'lab' },
];

const randomPassword = () => randomBytes(12).toString('base64url');

/**
 * First start: roles, the default category and group, the password policy and the demo
 * organisation (when asked). Later starts change nothing, except that DEMO_PASSWORD,
 * when set, is applied to the demo accounts so the printed sign-ins always work.
 */
export async function seed(db: Db, opts: { demo: boolean; demoPassword?: string }): Promise<SeedResult> {
  await db.insert(schema.roles).values(ROLES).onConflictDoNothing();
  const existing = await db.select({ id: schema.users.id }).from(schema.users).limit(1);
  if (existing.length > 0) {
    if (opts.demo && opts.demoPassword) {
      const passwordHash = await hashPassword(opts.demoPassword);
      await db
        .update(schema.users)
        .set({ passwordHash })
        .where(and(eq(schema.users.categoryId, 'default'), eq(schema.users.provider, 'local'), inArray(schema.users.username, [...DEMO_ACCOUNTS])));
    }
    return { created: false, accounts: DEMO_ACCOUNTS.map((u) => ({ username: u, role: u, category: 'default' })) };
  }

  await db.insert(schema.categories).values([
    { id: 'default', name: N.default_category, description: N.default_category_description, customUrlName: 'default' },
    ...(opts.demo
      ? [{ id: 'lab', name: N.lab_category, description: N.lab_category_description, customUrlName: 'lab' }]
      : []),
  ]);
  const groups = opts.demo
    ? [
        ...DEMO_GROUPS.map((g) => ({ ...g, categoryId: 'default' })),
        { id: 'lab-default', uid: 'default', name: N.lab_group, description: N.lab_group_description, categoryId: 'lab' },
      ]
    : [{ ...DEMO_GROUPS[0]!, categoryId: 'default' }];
  await db.insert(schema.groups).values(groups);
  await db.insert(schema.passwordPolicies).values({ id: 'default', categoryId: 'all', roleId: 'all', length: 8 });

  const users = opts.demo ? DEMO_USERS : DEMO_USERS.slice(0, 1);
  const accounts: SeededAccount[] = [];
  for (const u of users) {
    const password = opts.demoPassword ?? randomPassword();
    const id = randomUUID();
    await db.insert(schema.users).values({
      id,
      uid: u.username,
      username: u.username,
      provider: 'local',
      categoryId: u.category ?? 'default',
      groupId: u.group,
      roleId: u.role,
      name: u.name,
      email: `${u.username}@example.org`,
      emailVerifiedAt: new Date(),
      passwordHash: await hashPassword(password),
      passwordLastUpdated: new Date(),
      lang: null,
    });
    for (const g of u.secondary ?? []) await db.insert(schema.userSecondaryGroups).values({ userId: id, groupId: g });
    accounts.push({ username: u.username, role: u.role, category: u.category ?? 'default', password });
  }

  let registrationCode: string | undefined;
  if (opts.demo) {
    registrationCode = `join-${randomBytes(6).toString('hex')}`;
    await db.insert(schema.registrationCodes).values({
      code: registrationCode,
      categoryId: 'default',
      groupId: 'default-students-1b',
      roleId: 'user',
      description: N.registration_code_description,
    });
  }
  // With the demo, a GPU card, its profiles and a plan.
  const [firstAdmin] = await db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.roleId, 'admin')).limit(1);
  await seedReservables(db, { demo: opts.demo, adminId: firstAdmin?.id });
  return { created: true, accounts, registrationCode };
}
