import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import {
  ROLES,
  USER_CSV_HEADER,
  ZAdminImportAnswer,
  ZAdminImportQuery,
  ZAdminUser,
  ZAdminUserCreate,
  ZAdminUserList,
  ZAdminUsersBulk,
  ZAdminUsersBulkAnswer,
  ZAdminUsersQuery,
  ZAdminUserUpdate,
  ZUsername,
  type TAdminImportRow,
  type TRole,
} from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema, type Db } from '../../../db';
import { actorOf, audit } from '../../../audit/record';
import { ApiError, badRequest, forbidden, notFound, precondition } from '../../../http/errors';
import { authOf } from '../../../http/guard';
import { mailResetLink } from '../../../auth/recovery';
import { findPolicy, hashPassword, policyViolations } from '../../../auth/passwords';
import type { UserRow } from '../../../auth/sessions';
import { assertMayGiveRole, boundCategory, isAdmin, peopleGuards, targetCategory } from '../people/scope';
import { recycleUser, setUserActive } from './actions';
import { csvLine, parseCsv } from './csv';
import {
  allUsers,
  assertGroupsIn,
  insertUser,
  listUsers,
  newUserProblems,
  reachableUser,
  throwProblem,
  userLimitProblem,
  userViewById,
  type NewUser,
  type RowProblem,
} from './service';

const idParams = z.object({ id: z.string().min(1).max(64) });
const ZEmail = z.string().email();

/** Managers leave admins alone: an admin of their category is out of their hands. */
function assertMayTouch(request: FastifyRequest, user: UserRow) {
  if (!isAdmin(authOf(request)) && user.roleId === 'admin') throw forbidden('forbidden', 'Only admins manage admins');
}

/** Users: list, read, create, edit, delete (to the bin), bulk actions, CSV import and export. */
export async function adminUserRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff } = peopleGuards(ctx);
  const db = ctx.db;

  r.get('/admin/users', { preHandler: staff, schema: { querystring: ZAdminUsersQuery, response: { 200: ZAdminUserList } } }, async (request) =>
    listUsers(db, boundCategory(request), request.query),
  );

  r.get('/admin/users/export', { preHandler: staff, schema: { querystring: ZAdminUsersQuery.omit({ page: true, per_page: true }) } }, async (request, reply) => {
    const users = await allUsers(db, boundCategory(request), request.query);
    const head = csvLine(['username', 'name', 'email', 'role', 'group', 'category', 'active', 'provider']);
    const body = users.map((x) => csvLine([x.username, x.name, x.email, x.role, x.group_name, x.category_name, String(x.active), x.provider])).join('');
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="users.csv"')
      .send(head + body);
  });

  r.get('/admin/users/:id', { preHandler: staff, schema: { params: idParams, response: { 200: ZAdminUser } } }, async (request) => {
    await reachableUser(db, boundCategory(request), request.params.id);
    return (await userViewById(db, request.params.id))!;
  });

  r.post('/admin/users', { preHandler: staff, schema: { body: ZAdminUserCreate, response: { 200: ZAdminUser } } }, async (request) => {
    const b = request.body;
    assertMayGiveRole(request, b.role);
    const n: NewUser = {
      username: b.username, name: b.name, email: b.email, role: b.role, categoryId: targetCategory(request, b.category),
      groupId: b.group, secondaryGroups: b.secondary_groups, active: b.active, password: b.password ?? null, quota: b.quota,
    };
    const problems = await newUserProblems(db, n);
    if (problems[0]) throwProblem(problems[0]);
    const passwordHash = n.password === null ? null : await hashPassword(n.password);
    const row = await db.transaction(async (tx) => {
      const limit = await userLimitProblem(tx, n.groupId, n.categoryId);
      if (limit) throwProblem(limit);
      const created = await insertUser(tx, n, passwordHash);
      await audit(tx, actorOf(request), {
        action: 'user.create', objectType: 'user', objectId: created.id, objectName: created.username, categoryId: created.categoryId,
        detail: { role: created.roleId, group: created.groupId },
      });
      return created;
    });
    return (await userViewById(db, row.id))!;
  });

  r.put('/admin/users/:id', { preHandler: staff, schema: { params: idParams, body: ZAdminUserUpdate, response: { 200: ZAdminUser } } }, async (request) => {
    const user = await reachableUser(db, boundCategory(request), request.params.id);
    assertMayTouch(request, user);
    const b = request.body;
    if (b.role) assertMayGiveRole(request, b.role);
    const categoryId = b.category !== undefined ? targetCategory(request, b.category) : user.categoryId;
    if (categoryId !== user.categoryId) {
      if (!b.group) throw badRequest('missing_required_data', 'Moving to another category needs a group of it');
      const [cat] = await db.select({ id: schema.categories.id }).from(schema.categories).where(eq(schema.categories.id, categoryId));
      if (!cat) throw notFound('category_not_found', 'Category not found');
    }
    const groupId = b.group ?? user.groupId;
    await assertGroupsIn(db, [groupId, ...(b.secondary_groups ?? [])], categoryId);
    const set: Partial<typeof schema.users.$inferInsert> = {};
    if (b.name !== undefined) set.name = b.name;
    if (b.email !== undefined) set.email = b.email;
    if (b.role !== undefined) set.roleId = b.role;
    if (b.active !== undefined) set.active = b.active;
    if (b.quota !== undefined) set.quota = b.quota;
    if (categoryId !== user.categoryId) set.categoryId = categoryId;
    if (groupId !== user.groupId) set.groupId = groupId;
    if (b.password !== undefined) {
      const policy = await findPolicy(db, categoryId, b.role ?? user.roleId);
      const v = (await policyViolations(policy, b.password, user.username, user.passwordHistory))[0];
      if (v) throw badRequest(v.code, 'The password does not meet the password policy', v.params);
      set.passwordHash = await hashPassword(b.password);
      set.passwordHistory = [user.passwordHash, ...user.passwordHistory].filter((h): h is string => Boolean(h)).slice(0, 24);
      set.passwordLastUpdated = new Date();
    }
    await db.transaction(async (tx) => {
      if (set.groupId || set.categoryId) {
        const limit = await userLimitProblem(tx, groupId, categoryId);
        if (limit) throwProblem(limit);
      }
      if (Object.keys(set).length) await tx.update(schema.users).set(set).where(eq(schema.users.id, user.id));
      if (b.secondary_groups !== undefined) {
        await tx.delete(schema.userSecondaryGroups).where(eq(schema.userSecondaryGroups.userId, user.id));
        const secondary = [...new Set(b.secondary_groups.filter((s) => s !== groupId))];
        if (secondary.length) await tx.insert(schema.userSecondaryGroups).values(secondary.map((g) => ({ userId: user.id, groupId: g })));
      }
      const changed = Object.keys(b).filter((k) => k !== 'password');
      await audit(tx, actorOf(request), {
        action: b.password !== undefined ? 'user.password_set' : b.role !== undefined && b.role !== user.roleId ? 'user.role_change' : 'user.update',
        objectType: 'user', objectId: user.id, objectName: user.username, categoryId,
        detail: { fields: b.password !== undefined ? [...changed, 'password'] : changed, ...(b.role ? { role: b.role } : {}) },
      });
    });
    // Disabled, or a new password set by someone else: their sessions end now.
    if (b.active === false || b.password !== undefined) await ctx.sessions.revokeAllOf(user.id);
    return (await userViewById(db, user.id))!;
  });

  // A password-reset link by mail (a user made without a password sets one this way; anyone who forgot theirs too).
  r.post('/admin/users/:id/reset-mail', { preHandler: staff, schema: { params: idParams } }, async (request) => {
    const user = await reachableUser(db, boundCategory(request), request.params.id);
    assertMayTouch(request, user);
    if (!user.email) throw precondition('user_has_no_email', 'The user has no e-mail address');
    await mailResetLink(ctx, user);
    await audit(db, actorOf(request), { action: 'user.reset_mail', objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId });
    return { sent: true };
  });

  r.delete('/admin/users/:id', { preHandler: staff, schema: { params: idParams } }, async (request) => {
    const user = await reachableUser(db, boundCategory(request), request.params.id);
    assertMayTouch(request, user);
    if (user.id === authOf(request).user.id) throw forbidden('forbidden', 'You cannot delete yourself');
    const entry = await recycleUser(ctx, request, user);
    return { id: user.id, recycle_bin_id: entry.id };
  });

  r.post('/admin/users/bulk', { preHandler: staff, schema: { body: ZAdminUsersBulk, response: { 200: ZAdminUsersBulkAnswer } } }, async (request) => {
    const { ids, action, group } = request.body;
    if (action === 'change_group' && !group) throw badRequest('missing_required_data', 'change_group needs a group');
    const bound = boundCategory(request);
    const me = authOf(request).user.id;
    let done = 0;
    const failed: { id: string; description_code: string }[] = [];
    for (const id of [...new Set(ids)]) {
      try {
        const user = await reachableUser(db, bound, id);
        assertMayTouch(request, user);
        if (action === 'enable' || action === 'disable') {
          if (user.id === me && action === 'disable') throw forbidden('forbidden', 'You cannot disable yourself');
          await setUserActive(ctx, request, user, action === 'enable');
        } else if (action === 'delete') {
          if (user.id === me) throw forbidden('forbidden', 'You cannot delete yourself');
          await recycleUser(ctx, request, user);
        } else {
          await assertGroupsIn(db, [group!], user.categoryId);
          await db.transaction(async (tx) => {
            if (group !== user.groupId) {
              const limit = await userLimitProblem(tx, group!, user.categoryId);
              if (limit) throwProblem(limit);
            }
            await tx.update(schema.users).set({ groupId: group! }).where(eq(schema.users.id, user.id));
            await tx.delete(schema.userSecondaryGroups).where(and(eq(schema.userSecondaryGroups.userId, user.id), eq(schema.userSecondaryGroups.groupId, group!)));
            await audit(tx, actorOf(request), {
              action: 'user.update', objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId,
              detail: { fields: ['group'], group },
            });
          });
        }
        done++;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        failed.push({ id, description_code: err.code });
      }
    }
    return { done, failed };
  });

  // CSV import: text/csv, header username,name,email,role,group,password; the category is the group's.
  r.post(
    '/admin/users/import',
    { preHandler: staff, bodyLimit: 5 * 1024 * 1024, schema: { querystring: ZAdminImportQuery, body: z.string().max(5_000_000), response: { 200: ZAdminImportAnswer } } },
    async (request) => importUsers(ctx, request, request.body, request.query.dry_run),
  );
}

type Checked = { row: TAdminImportRow; user?: NewUser };

/** Reads and checks every row; a dry run stops there, a real one creates each valid row in its own transaction. */
async function importUsers(ctx: AppContext, request: FastifyRequest, text: string, dryRun: boolean) {
  const db = ctx.db;
  const rows = parseCsv(text);
  const header = rows.shift();
  const names = header?.cells.map((h) => h.trim().toLowerCase()) ?? [];
  if (!header || USER_CSV_HEADER.some((h, i) => names[i] !== h)) {
    throw badRequest('csv_bad_header', `The header row must be ${USER_CSV_HEADER.join(',')}`, { expected: USER_CSV_HEADER.join(',') });
  }
  if (rows.length > 10_000) throw badRequest('validation_error', 'At most 10,000 rows per import');
  const bound = boundCategory(request);
  const groups = await db
    .select({ id: schema.groups.id, name: schema.groups.name, categoryId: schema.groups.categoryId })
    .from(schema.groups)
    .where(bound === null ? undefined : eq(schema.groups.categoryId, bound));
  const seen = new Map<string, number>();
  const checked: Checked[] = [];
  // How many valid rows each group and category would get: the `users` limits count them.
  const adding = new Map<string, number>();
  for (const { line, cells } of rows) {
    const [username = '', name = '', email = '', role = '', group = '', password = ''] = cells.map((x) => x.trim());
    const errors: RowProblem[] = [];
    const row: TAdminImportRow = { line, username, status: 'valid', errors: errors as TAdminImportRow['errors'] };
    checked.push({ row });
    if (cells.length !== USER_CSV_HEADER.length) errors.push({ code: 'validation_error', params: { columns: cells.length } });
    if (!ZUsername.safeParse(username).success) errors.push({ code: username ? 'invalid_characters' : 'missing_required_data', params: { field: 'username' } });
    if (!name) errors.push({ code: 'missing_required_data', params: { field: 'name' } });
    if (email && !ZEmail.safeParse(email).success) errors.push({ code: 'invalid_email', params: { email } });
    if (!(ROLES as readonly string[]).includes(role)) errors.push({ code: 'invalid_role', params: { role } });
    else if (role === 'admin' && bound !== null) errors.push({ code: 'forbidden', params: { role } });
    if (!password) errors.push({ code: 'missing_required_data', params: { field: 'password' } });
    const byId = groups.find((x) => x.id === group);
    const byName = groups.filter((x) => x.name.toLowerCase() === group.toLowerCase());
    const target = byId ?? (byName.length === 1 ? byName[0] : undefined);
    if (!target) errors.push({ code: 'group_not_found', params: { group, ...(byName.length > 1 ? { ambiguous: true } : {}) } });
    const key = `${target?.categoryId ?? ''}/${username.toLowerCase()}`;
    if (username && seen.has(key)) errors.push({ code: 'username_exists', params: { username, line: seen.get(key) } });
    else if (username) seen.set(key, line);
    if (errors.length || !target) continue;
    const user: NewUser = {
      username, name, email, role: role as TRole, categoryId: target.categoryId, groupId: target.id,
      secondaryGroups: [], active: true, password, quota: null,
    };
    errors.push(...(await newUserProblems(db, user)));
    if (!errors.length) {
      const inGroup = (adding.get(`g:${target.id}`) ?? 0) + 1;
      const inCategory = (adding.get(`c:${target.categoryId}`) ?? 0) + 1;
      const limit = await userLimitProblem(db, target.id, target.categoryId, { group: inGroup, category: inCategory });
      if (limit) errors.push(limit);
      else {
        adding.set(`g:${target.id}`, inGroup);
        adding.set(`c:${target.categoryId}`, inCategory);
      }
    }
    if (!errors.length) checked[checked.length - 1]!.user = user;
  }
  for (const c of checked) if (c.row.errors.length) c.row.status = 'error';
  let created = 0;
  if (!dryRun) {
    for (const c of checked) {
      if (!c.user) continue;
      const n = c.user;
      try {
        const passwordHash = n.password === null ? null : await hashPassword(n.password);
        await db.transaction(async (tx) => {
          const again = await newUserProblems(tx, n);
          const limit = again[0] ?? (await userLimitProblem(tx, n.groupId, n.categoryId));
          if (limit) throwProblem(limit);
          const row = await insertUser(tx, n, passwordHash);
          await audit(tx, actorOf(request), {
            action: 'user.create', objectType: 'user', objectId: row.id, objectName: row.username, categoryId: row.categoryId,
            detail: { role: row.roleId, group: row.groupId, import: true },
          });
        });
        c.row.status = 'created';
        created++;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        c.row.status = 'error';
        c.row.errors.push({ code: err.code, params: err.params });
      }
    }
    if (created) {
      await audit(db, actorOf(request), { action: 'user.import', objectType: 'user', objectName: `${created} users`, detail: { created, rows: checked.length } });
    }
  }
  const invalid = checked.filter((c) => c.row.status === 'error').length;
  return {
    dry_run: dryRun,
    total: checked.length,
    valid: checked.filter((c) => c.user).length,
    invalid,
    created,
    rows: checked.map((c) => c.row),
  };
}

/** For the legacy call PUT /admin/user/{id}/active. */
export async function setActiveById(ctx: AppContext, request: FastifyRequest, id: string, active: boolean) {
  const [user] = await ctx.db.select().from(schema.users).where(and(eq(schema.users.id, id), isNull(schema.users.deletedAt)));
  if (!user) throw notFound('user_not_found', 'User not found');
  await setUserActive(ctx, request, user, active);
}
