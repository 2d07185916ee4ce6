import { eq, inArray, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { TRole, TUser } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { fromJson, ONE_ROW, pickAppliedQuota, usageFrom, usageSql } from '../quotas/applied';

const epoch = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

/** GET /user: the user without secrets, with names, applied quota and usage (reference §2.3). One query. */
export async function userView(db: Db, user: UserRow): Promise<TUser> {
  const primary = alias(schema.groups, 'primary_group');
  const usg = schema.userSecondaryGroups;
  const g = schema.groups;
  const [row] = await db
    .select({
      roleName: schema.roles.name,
      categoryName: schema.categories.name,
      categoryQuota: schema.categories.quota,
      groupName: primary.name,
      groupQuota: primary.quota,
      secondary: sql`(select coalesce(json_agg(json_build_array(${g.id}, ${g.name})), '[]'::json)
        from ${usg} inner join ${g} on ${g.id} = ${usg.groupId} where ${usg.userId} = ${user.id})`,
      used: usageSql({ userId: user.id }),
    })
    .from(ONE_ROW)
    .leftJoin(schema.roles, eq(schema.roles.id, user.roleId))
    .leftJoin(schema.categories, eq(schema.categories.id, user.categoryId))
    .leftJoin(primary, eq(primary.id, user.groupId));
  const secondary = fromJson<[string, string][] | null>(row?.secondary) ?? [];
  const applied = pickAppliedQuota(user, row?.groupQuota, row?.categoryQuota);
  const used = usageFrom(row?.used);
  return {
    id: user.id,
    uid: user.uid,
    username: user.username,
    name: user.name,
    provider: user.provider,
    category: user.categoryId,
    group: user.groupId,
    role: user.roleId as TRole,
    secondary_groups: secondary.map(([id]) => id),
    email: user.email,
    email_verified: epoch(user.emailVerifiedAt),
    email_pending: user.emailPending,
    photo: user.photo,
    lang: user.lang,
    active: user.active,
    accessed: epoch(user.accessedAt),
    disclaimer_acknowledged: user.disclaimerAcknowledged,
    password_last_updated: epoch(user.passwordLastUpdated) ?? 0,
    role_name: row?.roleName ?? user.roleId,
    category_name: row?.categoryName ?? user.categoryId,
    group_name: row?.groupName ?? user.groupId,
    user_name: user.name,
    secondary_groups_names: secondary.map(([, name]) => name),
    quota: applied.quota,
    restriction_applied: applied.restriction_applied,
    used,
    quotas: { user: user.quota ?? false, group: row?.groupQuota ?? false, category: row?.categoryQuota ?? false },
    total_disk_size: used.total_size,
    user_storage: null,
  };
}

export async function usersByIds(db: Db, ids: string[]) {
  if (ids.length === 0) return [];
  return db.select().from(schema.users).where(inArray(schema.users.id, ids));
}
