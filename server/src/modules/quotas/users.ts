import { sql } from 'drizzle-orm';
import type { DescriptionCode } from '@vdi/contracts';
import { schema, type Db } from '../../db';

const u = schema.users;
const g = schema.groups;
const c = schema.categories;

/**
 * The user-creation limits (seed 001 §3 limits `users`, core §8 user-creation codes): the group's
 * and the category's member count may not pass their `users` limit. 428 like every quota error.
 */
export async function userLimitProblem(
  db: Db,
  groupId: string,
  categoryId: string,
  adding: { group: number; category: number } = { group: 1, category: 1 },
): Promise<{ code: DescriptionCode; params: Record<string, unknown> } | null> {
  const [row] = await db
    .select({
      groupLimits: sql<unknown>`(select ${g.limits} from ${g} where ${g.id} = ${groupId})`,
      categoryLimits: sql<unknown>`(select ${c.limits} from ${c} where ${c.id} = ${categoryId})`,
      inGroup: sql<number>`(select count(*)::int from ${u} where ${u.groupId} = ${groupId} and ${u.deletedAt} is null)`,
      inCategory: sql<number>`(select count(*)::int from ${u} where ${u.categoryId} = ${categoryId} and ${u.deletedAt} is null)`,
    })
    .from(sql`(select 1) as one`);
  const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v) as { users?: number } | null;
  const gl = parse(row?.groupLimits);
  const cl = parse(row?.categoryLimits);
  if (gl && typeof gl.users === 'number' && Number(row!.inGroup) + adding.group > gl.users) {
    return { code: 'user_new_group_limit_exceeded', params: { users: gl.users } };
  }
  if (cl && typeof cl.users === 'number' && Number(row!.inCategory) + adding.category > cl.users) {
    return { code: 'user_new_category_limit_exceeded', params: { users: cl.users } };
  }
  return null;
}

