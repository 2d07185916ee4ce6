import type { AppContext } from '../../context';

export type ProviderMigration = { export: boolean; import: boolean };

/** Whether the users of a sign-in provider may export (to a code) and import (a code); unknown providers may not. */
export async function migrationOf(ctx: AppContext, provider: string): Promise<ProviderMigration> {
  const all = await ctx.settings.get('migration');
  return Object.hasOwn(all, provider) ? all[provider as keyof typeof all] : { export: false, import: false };
}
