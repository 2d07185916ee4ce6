import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { QuotaField, TRole } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema, type Db } from '../../db';
import { ApiError, badRequest, forbidden, notFound, precondition } from '../../http/errors';
import type { UserRow } from '../../auth/sessions';
import { tokenType } from '../../auth/tokens';
import { audit, type AuditActor } from '../../audit/record';
import { appliedQuota, usageOf } from '../quotas/applied';
import { migrationOf } from './settings';

const codeHash = (code: string) => createHash('sha256').update(code).digest('hex');
const RANK: Record<TRole, number> = { user: 0, advanced: 1, manager: 2, admin: 3 };

type Items = { desktops: number; templates: number; media: number; deployments: number };

/** What a user owns that a migration moves (seed 001 §5: at least one item is needed). */
export async function itemsOf(ctx: AppContext, userId: string): Promise<Items> {
  const d = schema.domains;
  const [row] = await ctx.db
    .select({
      desktops: sql<number>`(select count(*) from ${d} where ${d.userId} = ${userId} and ${d.kind} = 'desktop')`.mapWith(Number),
      templates: sql<number>`(select count(*) from ${d} where ${d.userId} = ${userId} and ${d.kind} = 'template')`.mapWith(Number),
      media: sql<number>`(select count(*) from ${schema.media} where ${schema.media.userId} = ${userId})`.mapWith(Number),
      deployments: sql<number>`(select count(*) from ${schema.deployments} where ${schema.deployments.userId} = ${userId})`.mapWith(Number),
    })
    .from(sql`(select 1) as one_row`);
  return row ?? { desktops: 0, templates: 0, media: 0, deployments: 0 };
}

/** `POST /user_migration/export`: a code valid 1 hour; it replaces the account's previous one. */
export async function exportUser(ctx: AppContext, actor: AuditActor, user: UserRow): Promise<{ token: string }> {
  if (!(await migrationOf(ctx, user.provider)).export) throw precondition('migration_not_enabled', 'Export is not enabled for this sign-in provider');
  const items = await itemsOf(ctx, user.id);
  if (items.desktops + items.templates + items.media + items.deployments === 0) {
    throw badRequest('migration_no_items_available', 'There are no desktops, templates, media or deployments to migrate');
  }
  const token = await ctx.tokens.signSpecial('user-migration', { user_id: user.id });
  const claims = await ctx.tokens.verify(token);
  const row = { codeHash: codeHash(token), status: 'exported' as const, targetUserId: null, expiresAt: new Date(claims.exp * 1000), createdAt: new Date() };
  await ctx.db.transaction(async (tx) => {
    await tx.insert(schema.userMigrations).values({ originUserId: user.id, ...row }).onConflictDoUpdate({ target: schema.userMigrations.originUserId, set: row });
    await audit(tx, actor, { action: 'user.migration_export', objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId });
  });
  return { token };
}

/** Reads a code: a bad signature is `invalid_token`, an old one `token_expired` (400, not a sign-out). */
async function readCode(ctx: AppContext, code: string) {
  let claims;
  try {
    claims = await ctx.tokens.verify(code);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'token_expired') throw badRequest('token_expired', 'The migration code has expired');
    throw badRequest('invalid_token', 'This is not a migration code');
  }
  if (tokenType(claims) !== 'user-migration' || !claims.user_id) throw badRequest('invalid_token', 'This is not a migration code');
  return claims.user_id;
}

const QUOTA_OF: [keyof Items, QuotaField, string][] = [
  ['desktops', 'desktops', 'migration_desktop_quota_error'],
  ['templates', 'templates', 'migration_template_quota_error'],
  ['media', 'isos', 'migration_media_quota_error'],
  ['deployments', 'deployments_total', 'migration_deployments_quota_error'],
];

/** The original's 403 for a second migration into one account (spec 001 §5: multiple migrations are refused). */
const multipleMigrations = () => forbidden('multiple_migrations_found', 'This account has already received a migration');

/** The migration this account received, if any: from whom, when, and what moved. */
export async function importedInto(db: Db, targetId: string) {
  const [row] = await db
    .select({ migratedAt: schema.userMigrations.migratedAt, moved: schema.userMigrations.moved })
    .from(schema.userMigrations)
    .where(and(eq(schema.userMigrations.targetUserId, targetId), eq(schema.userMigrations.status, 'migrated')));
  return row ?? null;
}

/**
 * `POST /user_migration/import`: checks every rule of seed 001 §5 (and the reference's codes), then moves
 * the origin's desktops, templates, media and deployments, with their disks, to the caller in one transaction;
 * the origin account is then disabled and signed out.
 */
export async function importUser(ctx: AppContext, actor: AuditActor, target: UserRow, code: string) {
  if (!(await migrationOf(ctx, target.provider)).import) throw precondition('migration_not_enabled', 'Import is not enabled for this sign-in provider');
  const originId = await readCode(ctx, code);
  const [row] = await ctx.db.select().from(schema.userMigrations).where(eq(schema.userMigrations.codeHash, codeHash(code)));
  // A code replaced by a newer export is no longer stored: not found.
  if (!row || row.originUserId !== originId) throw notFound('migration_not_found', 'No migration with this code');
  if (row.status !== 'exported') throw badRequest('migration_code_used', 'This migration code was already used');
  if (row.expiresAt.getTime() <= Date.now()) throw badRequest('token_expired', 'The migration code has expired');
  if (originId === target.id) throw badRequest('migration_same_user', 'The code belongs to this same account');
  if (await importedInto(ctx.db, target.id)) throw multipleMigrations();
  const [origin] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, originId));
  if (!origin) throw notFound('migration_not_found', 'The account of this code no longer exists');
  if (origin.categoryId !== target.categoryId) throw precondition('different_category_migration', 'Both accounts must be in the same category');
  if (origin.roleId === 'admin') throw precondition('role_migration_admin', 'An administrator account cannot be migrated');
  const items = await itemsOf(ctx, origin.id);
  if (RANK[target.roleId as TRole] > RANK[origin.roleId as TRole]) {
    throw precondition('role_migration_higher', 'The target account has a higher role than the origin');
  }
  if (target.roleId === 'user' && items.templates + items.media + items.deployments > 0) {
    throw precondition('role_migration_user', 'Templates, media and deployments cannot go to a user account');
  }
  if (items.desktops + items.templates + items.media + items.deployments === 0) {
    throw badRequest('migration_no_items_available', 'There are no desktops, templates, media or deployments to migrate');
  }
  const { quota } = await appliedQuota(ctx.db, target);
  if (quota) {
    const used = await usageOf(ctx.db, target.id, QUOTA_OF.map(([, f]) => f));
    for (const [item, field, failure] of QUOTA_OF) {
      if (items[item] > 0 && used[field] + items[item] > quota[field]) {
        throw precondition(failure, `The target account's ${field} quota cannot hold the migrated items`, { [field]: quota[field] });
      }
    }
  }
  const owner = { userId: target.id, categoryId: target.categoryId, groupId: target.groupId };
  const moved = { originUsername: origin.username, ...items };
  await ctx.db.transaction(async (tx) => {
    // Imports into one account, one at a time: the second sees the first's row and is refused.
    await tx.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.id, target.id)).for('update');
    if (await importedInto(tx, target.id)) throw multipleMigrations();
    const claimed = await tx
      .update(schema.userMigrations)
      .set({ status: 'migrated', targetUserId: target.id, migratedAt: new Date(), moved })
      .where(and(eq(schema.userMigrations.originUserId, origin.id), eq(schema.userMigrations.status, 'exported'), eq(schema.userMigrations.codeHash, row.codeHash)))
      .returning();
    if (claimed.length === 0) throw badRequest('migration_code_used', 'This migration code was already used');
    await tx.update(schema.domains).set(owner).where(eq(schema.domains.userId, origin.id));
    await tx.update(schema.media).set(owner).where(eq(schema.media.userId, origin.id));
    await tx.update(schema.deployments).set(owner).where(eq(schema.deployments.userId, origin.id));
    await tx.update(schema.storage).set({ userId: target.id }).where(eq(schema.storage.userId, origin.id));
    // The original deletes the migrated account; it is disabled here (its records keep their references).
    await tx.update(schema.users).set({ active: false }).where(eq(schema.users.id, origin.id));
    await audit(tx, actor, {
      action: 'user.migration_import',
      objectType: 'user',
      objectId: target.id,
      objectName: target.username,
      categoryId: target.categoryId,
      detail: { origin: origin.id, origin_username: origin.username, ...items },
    });
  });
  await ctx.sessions.revokeAllOf(origin.id);
  return {};
}
