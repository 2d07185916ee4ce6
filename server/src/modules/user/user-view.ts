import { eq, inArray } from 'drizzle-orm';
import type { TRole, TUser } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { appliedQuota, usageOf } from '../quotas/applied';

const epoch = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

/** GET /user: the user without secrets, with names, applied quota and usage (reference §2.3). */
export async function userView(db: Db, user: UserRow): Promise<TUser> {
  const [[role], [category], [group], secondary] = await Promise.all([
    db.select().from(schema.roles).where(eq(schema.roles.id, user.roleId)),
    db.select().from(schema.categories).where(eq(schema.categories.id, user.categoryId)),
    db.select().from(schema.groups).where(eq(schema.groups.id, user.groupId)),
    db
      .select({ id: schema.groups.id, name: schema.groups.name })
      .from(schema.userSecondaryGroups)
      .innerJoin(schema.groups, eq(schema.groups.id, schema.userSecondaryGroups.groupId))
      .where(eq(schema.userSecondaryGroups.userId, user.id)),
  ]);
  const applied = await appliedQuota(db, user);
  return {
    id: user.id,
    uid: user.uid,
    username: user.username,
    name: user.name,
    provider: user.provider,
    category: user.categoryId,
    group: user.groupId,
    role: user.roleId as TRole,
    secondary_groups: secondary.map((g) => g.id),
    email: user.email,
    email_verified: epoch(user.emailVerifiedAt),
    photo: user.photo,
    lang: user.lang,
    active: user.active,
    accessed: epoch(user.accessedAt),
    disclaimer_acknowledged: user.disclaimerAcknowledged,
    password_last_updated: epoch(user.passwordLastUpdated) ?? 0,
    role_name: role?.name ?? user.roleId,
    category_name: category?.name ?? user.categoryId,
    group_name: group?.name ?? user.groupId,
    user_name: user.name,
    secondary_groups_names: secondary.map((g) => g.name),
    quota: applied.quota,
    restriction_applied: applied.restriction_applied,
    used: await usageOf(db, user.id),
  };
}

export async function usersByIds(db: Db, ids: string[]) {
  if (ids.length === 0) return [];
  return db.select().from(schema.users).where(inArray(schema.users.id, ids));
}
