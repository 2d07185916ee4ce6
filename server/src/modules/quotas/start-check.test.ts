// The start's quota check on the database: what runs of a person's own desktops, of their group's and of their
// category's (one statement), and the refusals in their order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { QUOTA_FIELDS, type TLimits } from '@vdi/contracts';
import { schema, type Database } from '../../db';
import { seed } from '../../seed/seed';
import { openTestDatabase } from '../../../test/helpers/db';
import { ApiError } from '../../http/errors';
import { checkStartQuota } from './start-check';
import { runningAround } from './usage';

let database: Database;
const userOf = async (username: string) => (await database.db.select().from(schema.users).where(eq(schema.users.username, username)))[0]!;
/** Limits that hold nobody back (each test lowers one). */
const NONE = { ...Object.fromEntries(QUOTA_FIELDS.map((f) => [f, 1000])), users: 1000 } as TLimits;

beforeAll(async () => {
  database = await openTestDatabase();
  await seed(database.db, { demo: true, demoPassword: 'start-check-pass' });
  const uma = await userOf('user'); // students 1A
  const sara = await userOf('student01'); // students 1A
  const nora = await userOf('student03'); // students 1B, the same category
  const desktop = (id: string, owner: typeof uma, status: string, memoryMb: number, vcpus: number, poolId: string | null = null) => ({
    id,
    kind: 'desktop' as const,
    name: id,
    userId: owner.id,
    categoryId: owner.categoryId,
    groupId: owner.groupId,
    status,
    poolId,
    hardware: { memoryMb, vcpus } as never,
    guestProperties: {} as never,
    image: {} as never,
  });
  await database.db.insert(schema.domains).values([
    desktop('uma-own', uma, 'Started', 1024, 1),
    desktop('uma-pool', uma, 'Started', 2048, 2, 'some-pool'), // a pool's: the pool's size, not Uma's quota
    desktop('uma-stopped', uma, 'Stopped', 4096, 4),
    desktop('sara-own', sara, 'WaitingIP', 512, 1),
    desktop('nora-own', nora, 'Starting', 1024, 2),
  ]);
});
afterAll(() => database?.close());

describe("a start's quota check", () => {
  it("sums what runs of the person's own, their group's and their category's in one statement", async () => {
    const uma = await userOf('user');
    expect(await runningAround(database.db, uma)).toEqual({
      mine: { count: 1, memoryGb: 1, vcpus: 1 },
      group: { count: 3, memoryGb: 3.5, vcpus: 4 },
      category: { count: 4, memoryGb: 4.5, vcpus: 6 },
    });
    // Another person of the group: none of their own, the same group and category.
    expect(await runningAround(database.db, await userOf('student02'))).toMatchObject({ mine: { count: 0, memoryGb: 0, vcpus: 0 }, group: { count: 3 }, category: { count: 4 } });
  });

  it('refuses in order: the person’s quota, then the group’s limits, then the category’s; a pool desktop only the limits', async () => {
    const uma = await userOf('user');
    const need = { memoryGb: 0.5, vcpus: 1 };
    // (a fresh row each time, as each request reads it: the levels are kept a second per row read)
    const code = async (opts?: { personal: boolean }) => checkStartQuota(database.db, await userOf('user'), need, opts).then(() => 'allowed', (err: ApiError) => err.code);
    // Students 1A may run one desktop each: Uma runs one of her own.
    expect(await code()).toBe('desktop_start_user_quota_exceeded');
    expect(await code({ personal: false })).toBe('allowed');

    await database.db.update(schema.groups).set({ limits: { ...NONE, running: 3 } }).where(eq(schema.groups.id, uma.groupId));
    expect(await code({ personal: false })).toBe('desktop_start_group_limit_exceeded');
    await database.db.update(schema.groups).set({ limits: { ...NONE, vcpus: 4.5 } }).where(eq(schema.groups.id, uma.groupId));
    expect(await code({ personal: false })).toBe('desktop_start_group_vcpu_limit_exceeded');
    await database.db.update(schema.groups).set({ limits: null }).where(eq(schema.groups.id, uma.groupId));

    await database.db.update(schema.categories).set({ limits: { ...NONE, memory: 4.75 } }).where(eq(schema.categories.id, uma.categoryId));
    expect(await code({ personal: false })).toBe('desktop_start_category_memory_limit_exceeded');
    await database.db.update(schema.categories).set({ limits: { ...NONE, memory: 5 } }).where(eq(schema.categories.id, uma.categoryId));
    expect(await code({ personal: false })).toBe('allowed');
    await database.db.update(schema.categories).set({ limits: null }).where(eq(schema.categories.id, uma.categoryId));
  });
});
