import type { TSettingKey } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { forgetMailSetting } from '../../../mail/mailer';

/**
 * Settings that live services hold in memory (the session lifetimes; the mail setting as read lately) are
 * applied here: at start for all of them, and after each change for the one changed. Every other
 * setting is read from the database where it is used, so it applies to the next request anyway.
 */
export async function applySettings(ctx: Pick<AppContext, 'db' | 'sessions' | 'settings'>, key?: TSettingKey) {
  if (!key || key === 'mail') forgetMailSetting(ctx.db);
  if (!key || key === 'sessions') ctx.sessions.applySetting(await ctx.settings.get('sessions'));
}

/** At the server's start: every setting applied, then each one changed through any server process as it changes. */
export async function followSettings(ctx: AppContext) {
  ctx.peers.subscribe('setting', (key) => applySettings(ctx, typeof key === 'string' ? (key as TSettingKey) : undefined));
  await applySettings(ctx);
}

/** A setting was stored: it applies here before the answer, and on every other server process at once. */
export const settingChanged = (ctx: AppContext, key: TSettingKey) => ctx.peers.publish('setting', key);
