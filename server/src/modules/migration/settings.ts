import type { AppContext } from '../../context';
import type { UserRow } from '../../auth/sessions';

export type ProviderMigration = { export: boolean; import: boolean; force_migration: boolean };

const OFF: ProviderMigration = { export: false, import: false, force_migration: false };

/** Whether the users of a sign-in provider may export (to a code) and import (a code); unknown providers may not. */
export async function migrationOf(ctx: AppContext, provider: string): Promise<ProviderMigration> {
  const all = await ctx.settings.get('migration');
  if (provider === 'exceptions' || !Object.hasOwn(all, provider)) return OFF;
  return { ...OFF, ...(all[provider as keyof typeof all] as Partial<ProviderMigration>) };
}

/** `migrations_block` (reference §6.4): forced migration is on for the user's provider and they are not excepted. */
export async function migrationsBlock(ctx: AppContext, user: UserRow): Promise<boolean> {
  const all = await ctx.settings.get('migration');
  if (!(await migrationOf(ctx, user.provider)).force_migration) return false;
  const ex = all.exceptions;
  return !(
    ex.categories.includes(user.categoryId) ||
    ex.groups.includes(user.groupId) ||
    ex.roles.includes(user.roleId) ||
    ex.users.includes(user.id)
  );
}
