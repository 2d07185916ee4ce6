import type { TSettingKey } from '@vdi/contracts';
import type { AppContext } from '../../../context';

/**
 * Settings that live services hold in memory (the mailer's transport, the session lifetimes) are
 * applied here: at start for all of them, and after each change for the one changed. Every other
 * setting is read from the database where it is used, so it applies to the next request anyway.
 */
export async function applySettings(ctx: AppContext, key?: TSettingKey) {
  if (!key || key === 'mail') ctx.mailer.configure?.(await ctx.settings.get('mail'));
  if (!key || key === 'sessions') ctx.sessions.applySetting(await ctx.settings.get('sessions'));
}
