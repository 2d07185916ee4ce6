import { randomUUID } from 'node:crypto';
import { and, count, eq, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { DescriptionCode, TAdminUser, TQuota, TRole } from '@vdi/contracts';
import { schema, type Db } from '../../../db';
import { badRequest, conflict, notFound, precondition } from '../../../http/errors';
import { findPolicy, hashPassword, policyViolations } from '../../../auth/passwords';
import type { UserRow } from '../../../auth/sessions';
import type { FastifyRequest } from 'fastify';
import { assertReach, orderOf, searchLike } from '../people/scope';
export { userLimitProblem } from '../../quotas/users';

export type RowProblem = { code: DescriptionCode | (string & {}); params: Record<string, unknown> | null };

const u = schema.users;
const g = schema.groups;
const c = schema.categories;

/** Secondary groups of each user, as one aggregate column. */
const secondarySql = sql<string[] | null>`(select coalesce(json_agg(s.group_id order by s.group_id), '[]'::json) from user_secondary_groups s where s.user_id = users.id)`;

const LIST_COLUMNS = {
  id: u.id,
  username: u.username,
  name: u.name,
  email: u.email,
  roleId: u.roleId,
  categoryId: u.categoryId,
  categoryName: c.name,
  groupId: u.groupId,
  groupName: g.name,
  active: u.active,
  provider: u.provider,
  quota: u.quota,
  accessedAt: u.accessedAt,
  createdAt: u.createdAt,
  secondary: secondarySql,
  twoFactor: sql<boolean>`(${u.totpEnabledAt} is not null)`,
};
type ListRow = { [K in keyof typeof LIST_COLUMNS]: unknown } & {
  id: string; username: string; name: string; email: string; roleId: string; categoryId: string; categoryName: string | null;
  groupId: string; groupName: string | null; active: boolean; provider: string; quota: TQuota | null; accessedAt: Date | null; createdAt: Date;
  secondary: string[] | string | null;
  twoFactor: boolean;
};

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

function userView(r: ListRow): TAdminUser {
  const secondary = typeof r.secondary === 'string' ? (JSON.parse(r.secondary) as string[]) : (r.secondary ?? []);
  return {
    id: r.id,
    username: r.username,
    name: r.name,
    email: r.email,
    role: r.roleId as TRole,
    category: r.categoryId,
    category_name: r.categoryName ?? r.categoryId,
    group: r.groupId,
    group_name: r.groupName ?? r.groupId,
    secondary_groups: secondary,
    active: r.active,
    provider: r.provider,
    quota: r.quota,
    accessed: iso(r.accessedAt),
    created: iso(r.createdAt)!,
    two_factor: r.twoFactor === true,
  };
}

export type UserFilters = {
  page: number; per_page: number; sort?: string; order: 'asc' | 'desc'; search?: string;
  category?: string; group?: string; role?: TRole; active?: boolean; provider?: string;
};

/** Users not in the recycle bin, within the caller's reach and the filters. */
function userWhere(bound: string | null, f: Partial<UserFilters>): SQL {
  const parts: (SQL | undefined)[] = [isNull(u.deletedAt)];
  if (bound !== null) parts.push(eq(u.categoryId, bound));
  if (f.category) parts.push(eq(u.categoryId, f.category));
  if (f.group) parts.push(eq(u.groupId, f.group));
  if (f.role) parts.push(eq(u.roleId, f.role));
  if (f.active !== undefined) parts.push(eq(u.active, f.active));
  if (f.provider) parts.push(eq(u.provider, f.provider));
  if (f.search) {
    parts.push(or(searchLike(u.username, f.search), searchLike(u.name, f.search), searchLike(u.email, f.search)));
  }
  return and(...parts)!;
}

const SORTS = {
  username: u.username, name: u.name, email: u.email, role: u.roleId, category: c.name, group: g.name,
  active: u.active, accessed: u.accessedAt, created: u.createdAt,
};

/** One page of users (SQL paging) and how many match. */
export async function listUsers(db: Db, bound: string | null, f: UserFilters) {
  const where = userWhere(bound, f);
  const [rows, [total]] = await Promise.all([
    db
      .select(LIST_COLUMNS)
      .from(u)
      .leftJoin(g, eq(g.id, u.groupId))
      .leftJoin(c, eq(c.id, u.categoryId))
      .where(where)
      .orderBy(...orderOf(SORTS, f.sort, 'username', f.order, u.id))
      .limit(f.per_page)
      .offset((f.page - 1) * f.per_page),
    // The name-joined columns only matter for sorting: the count reads the users table alone.
    db.select({ n: count() }).from(u).where(where),
  ]);
  return { items: (rows as ListRow[]).map(userView), total: total?.n ?? 0 };
}

/** Every matching user, for the CSV export (no paging). */
export async function allUsers(db: Db, bound: string | null, f: Partial<UserFilters>) {
  const rows = await db
    .select(LIST_COLUMNS)
    .from(u)
    .leftJoin(g, eq(g.id, u.groupId))
    .leftJoin(c, eq(c.id, u.categoryId))
    .where(userWhere(bound, f))
    .orderBy(u.categoryId, u.username);
  return (rows as ListRow[]).map(userView);
}

export async function userViewById(db: Db, id: string): Promise<TAdminUser | null> {
  const [row] = await db
    .select(LIST_COLUMNS)
    .from(u)
    .leftJoin(g, eq(g.id, u.groupId))
    .leftJoin(c, eq(c.id, u.categoryId))
    .where(and(eq(u.id, id), isNull(u.deletedAt)));
  return row ? userView(row as ListRow) : null;
}

/** A live (not recycled) user the caller reaches, else 404 user_not_found. */
export async function reachableUser(db: Db, request: FastifyRequest, id: string): Promise<UserRow> {
  const missing = () => notFound('user_not_found', 'User not found');
  const [row] = await db.select().from(u).where(and(eq(u.id, id), isNull(u.deletedAt)));
  if (!row) throw missing();
  assertReach(request, row.categoryId, missing);
  return row;
}

/** The group, in the given category, or the problem. */
async function groupIn(db: Db, groupId: string, categoryId: string) {
  const [row] = await db.select().from(g).where(eq(g.id, groupId));
  return row && row.categoryId === categoryId ? row : null;
}

export const throwProblem = (p: RowProblem): never => {
  if (p.code.endsWith('_limit_exceeded') || p.code.includes('quota')) throw precondition(p.code, 'Limit exceeded', p.params);
  if (p.code === 'username_exists') throw conflict(p.code, 'That username is taken in this category', p.params);
  if (p.code === 'group_not_found' || p.code === 'category_not_found') throw notFound(p.code, 'Not found');
  throw badRequest(p.code, 'Invalid value', p.params);
};

export type NewUser = {
  username: string; name: string; email: string; role: TRole; categoryId: string; groupId: string;
  secondaryGroups: string[]; active: boolean;
  /** None: the user sets one through a reset link (`POST /admin/users/{id}/reset-mail`) before signing in. */
  password: string | null;
  quota: TQuota | null;
};

/** Everything wrong with a new user, checked against the database (the import reports them all). */
export async function newUserProblems(db: Db, n: NewUser): Promise<RowProblem[]> {
  const out: RowProblem[] = [];
  const [category] = await db.select({ id: c.id }).from(c).where(eq(c.id, n.categoryId));
  if (!category) return [{ code: 'category_not_found', params: { category: n.categoryId } }];
  if (!(await groupIn(db, n.groupId, n.categoryId))) out.push({ code: 'group_not_found', params: { group: n.groupId } });
  if (n.secondaryGroups.length) {
    const found = await db.select({ id: g.id }).from(g).where(and(inArray(g.id, n.secondaryGroups), eq(g.categoryId, n.categoryId)));
    const missing = n.secondaryGroups.find((s) => !found.some((f) => f.id === s));
    if (missing) out.push({ code: 'group_not_found', params: { group: missing } });
  }
  // Recycled users keep their name: a restore must find it free.
  const [taken] = await db
    .select({ id: u.id })
    .from(u)
    .where(and(eq(u.categoryId, n.categoryId), eq(u.provider, 'local'), or(eq(u.username, n.username), eq(u.uid, n.username))));
  if (taken) out.push({ code: 'username_exists', params: { username: n.username } });
  const policy = await findPolicy(db, n.categoryId, n.role);
  if (n.password !== null) for (const v of await policyViolations(policy, n.password, n.username, [])) out.push(v);
  return out;
}

/** Inserts a checked new user (and their secondary groups) with `tx`; answers the row. */
export async function insertUser(tx: Db, n: NewUser, passwordHash: string | null): Promise<UserRow> {
  const id = randomUUID();
  const [row] = await tx
    .insert(u)
    .values({
      id,
      uid: n.username,
      username: n.username,
      provider: 'local',
      categoryId: n.categoryId,
      groupId: n.groupId,
      roleId: n.role,
      name: n.name,
      email: n.email,
      active: n.active,
      passwordHash,
      passwordLastUpdated: passwordHash ? new Date() : null,
      quota: n.quota,
    })
    .returning();
  const secondary = [...new Set(n.secondaryGroups.filter((s) => s !== n.groupId))];
  if (secondary.length) await tx.insert(schema.userSecondaryGroups).values(secondary.map((groupId) => ({ userId: id, groupId })));
  return row!;
}

export const hashFor = (password: string) => hashPassword(password);

/** Checks that every secondary group exists in the category (for an edit). */
export async function assertGroupsIn(db: Db, groupIds: string[], categoryId: string) {
  for (const id of groupIds) if (!(await groupIn(db, id, categoryId))) throw notFound('group_not_found', 'Group not found');
}
