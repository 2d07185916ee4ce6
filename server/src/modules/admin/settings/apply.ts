import type { TSettingKey } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { forgetMailSetting } from '../../../mail/mailer';

/**
 * Settings that live services hold in memory (the session lifetimes; the mail setting as read lately) are
 * applied here: at start for all of them, and after each change for the one changed. Every other
 * setting is read from the database where it is used, so it applies to the next request anyway.
 */
export async function applySettings(ctx: AppContext, key?: TSettingKey) {
  if (!key || key === 'mail') forgetMailSetting(ctx.db);
  if (!key || key === 'sessions') ctx.sessions.applySetting(await ctx.settings.get('sessions'));
}
