import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import {
  ZAdminImportAnswer,
  ZAdminImportJob,
  ZAdminImportQuery,
  ZAdminPasswordReset,
  ZAdminPasswordResetAnswer,
  ZCredentialSheet,
  ZAdminUser,
  ZAdminUserCreate,
  ZAdminUserList,
  ZAdminUsersBulk,
  ZAdminUsersBulkAnswer,
  ZAdminUsersQuery,
  ZAdminUserUpdate,
} from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { auditActorOf, audit } from '../../../audit/record';
import { ApiError, badRequest, forbidden, notFound, precondition } from '../../../http/errors';
import { authOf } from '../../../http/guard';
import { mailResetLink } from '../../../auth/recovery';
import { findPolicy, hashPassword, policyViolations } from '../../../auth/passwords';
import type { UserRow } from '../../../auth/sessions';
import { assertMayGiveRole, boundCategory, isAdmin, peopleGuards, targetCategory } from '../people/scope';
import { recycleUser, setUserActive } from './actions';
import { dryRunImport, importJob, registerImportJob, startImport } from './import';
import { csvFile } from '../../../http/csv';
import { requirePublicUrl } from '../../../http/base-url';
import { resetPasswords } from './password-reset';
import { credentialsCsv, credentialsPdf } from './credentials';
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
} from './service';

const idParams = z.object({ id: z.string().min(1).max(64) });

/** Managers leave admins alone: an admin of their category is out of their hands. */
function assertMayTouch(request: FastifyRequest, user: UserRow) {
  if (!isAdmin(authOf(request)) && user.roleId === 'admin') throw forbidden('forbidden', 'Only admins manage admins');
}

/** Users: list, read, create, edit, delete (to the bin), bulk actions, CSV import and export. */
export async function adminUserRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff } = peopleGuards(ctx);
  const db = ctx.db;
  registerImportJob(ctx);

  r.get('/admin/users', { preHandler: staff, schema: { querystring: ZAdminUsersQuery, response: { 200: ZAdminUserList } } }, async (request) =>
    listUsers(db, boundCategory(request), request.query),
  );

  r.get('/admin/users/export', { preHandler: staff, schema: { querystring: ZAdminUsersQuery.omit({ page: true, per_page: true }) } }, async (request, reply) => {
    const users = await allUsers(db, boundCategory(request), request.query);
    const head = ['username', 'name', 'email', 'role', 'group', 'category', 'active', 'provider'];
    const body = csvFile([head, ...users.map((x) => [x.username, x.name, x.email, x.role, x.group_name, x.category_name, String(x.active), x.provider])]);
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="users.csv"')
      .send(body);
  });

  r.get('/admin/users/:id', { preHandler: staff, schema: { params: idParams, response: { 200: ZAdminUser } } }, async (request) => {
    await reachableUser(db, request, request.params.id);
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
      await audit(tx, auditActorOf(request), {
        action: 'user.create', objectType: 'user', objectId: created.id, objectName: created.username, categoryId: created.categoryId,
        detail: { role: created.roleId, group: created.groupId },
      });
      return created;
    });
    return (await userViewById(db, row.id))!;
  });

  r.put('/admin/users/:id', { preHandler: staff, schema: { params: idParams, body: ZAdminUserUpdate, response: { 200: ZAdminUser } } }, async (request) => {
    const user = await reachableUser(db, request, request.params.id);
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
      await audit(tx, auditActorOf(request), {
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
    const user = await reachableUser(db, request, request.params.id);
    assertMayTouch(request, user);
    if (!user.email) throw precondition('user_has_no_email', 'The user has no e-mail address');
    await mailResetLink(ctx, user);
    await audit(db, auditActorOf(request), { action: 'user.reset_mail', objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId });
    return { sent: true };
  });

  r.delete('/admin/users/:id', { preHandler: staff, schema: { params: idParams } }, async (request) => {
    const user = await reachableUser(db, request, request.params.id);
    assertMayTouch(request, user);
    if (user.id === authOf(request).user.id) throw forbidden('forbidden', 'You cannot delete yourself');
    const entry = await recycleUser(ctx, request, user);
    return { id: user.id, recycle_bin_id: entry.id };
  });

  r.post('/admin/users/bulk', { preHandler: staff, schema: { body: ZAdminUsersBulk, response: { 200: ZAdminUsersBulkAnswer } } }, async (request) => {
    const { ids, action, group } = request.body;
    if (action === 'change_group' && !group) throw badRequest('missing_required_data', 'change_group needs a group');
    const me = authOf(request).user.id;
    let done = 0;
    const failed: { id: string; description_code: string }[] = [];
    for (const id of [...new Set(ids)]) {
      try {
        const user = await reachableUser(db, request, id);
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
            await audit(tx, auditActorOf(request), {
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

  // Classroom accounts: one-time passwords for many local users (password-reset.ts), each refused user with its reason.
  r.post(
    '/admin/users/password-reset',
    { preHandler: staff, schema: { body: ZAdminPasswordReset, response: { 200: ZAdminPasswordResetAnswer } } },
    async (request) => resetPasswords(ctx, request, request.body.ids, (user) => assertMayTouch(request, user)),
  );

  // Their credentials sheet, from the rows the browser holds: answered, never stored; the address is the configured one.
  r.post('/admin/users/credentials-sheet', { preHandler: staff, bodyLimit: 2 * 1024 * 1024, schema: { body: ZCredentialSheet } }, async (request, reply) => {
    const { format, rows, labels } = request.body;
    const signIn = `${await requirePublicUrl(ctx)}/login`;
    reply.header('cache-control', 'no-store');
    if (format === 'csv') {
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="credentials.csv"')
        .send(credentialsCsv(rows, labels, signIn));
    }
    return reply
      .header('content-type', 'application/pdf')
      .header('content-disposition', 'attachment; filename="credentials.pdf"')
      .send(await credentialsPdf(rows, labels, signIn));
  });

  // CSV import (import.ts): a dry run answers at once; a real import answers 202 with its job.
  r.post(
    '/admin/users/import',
    {
      preHandler: staff,
      bodyLimit: 5 * 1024 * 1024,
      schema: { querystring: ZAdminImportQuery, body: z.string().max(5_000_000), response: { 200: ZAdminImportAnswer, 202: ZAdminImportJob } },
    },
    async (request, reply) => {
      if (request.query.dry_run) return dryRunImport(ctx, request, request.body);
      return reply.code(202).send(await startImport(ctx, request, request.body));
    },
  );
  r.get('/admin/users/import/:id', { preHandler: staff, schema: { params: idParams, response: { 200: ZAdminImportJob } } }, async (request) =>
    importJob(ctx, request, request.params.id),
  );
}

/** For the legacy call PUT /admin/user/{id}/active. */
export async function setActiveById(ctx: AppContext, request: FastifyRequest, id: string, active: boolean) {
  const [user] = await ctx.db.select().from(schema.users).where(and(eq(schema.users.id, id), isNull(schema.users.deletedAt)));
  if (!user) throw notFound('user_not_found', 'User not found');
  await setUserActive(ctx, request, user, active);
}
