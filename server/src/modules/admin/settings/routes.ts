import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { inArray } from 'drizzle-orm';
import { z } from 'zod';
import { ZMailTestBody, type TSettingKey } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { requireAuth } from '../../../http/guard';
import { badRequest, notFound, precondition } from '../../../http/errors';
import { isSettingKey, SETTINGS, type SettingValue } from '../../../settings';
import { auditActorOf, audit } from '../../../audit/record';
import { mailEnabled, sendMail } from '../../../mail/mailer';
import { notifyAdmins } from '../../../socket/admins';
import { settingChanged } from './apply';

const ZKeyParams = z.object({ key: z.string().max(32) });

/**
 * What GET answers for a setting: the mail password never leaves the server; the public address
 * comes with `PUBLIC_URL` when the server sets it (it then wins over the stored one).
 */
function answerOf<K extends TSettingKey>(ctx: AppContext, key: K, value: SettingValue<K>): unknown {
  if (key === 'public_address') return { ...(value as SettingValue<'public_address'>), environment: ctx.config.publicUrl ?? null };
  if (key !== 'mail') return value;
  const mail = value as SettingValue<'mail'>;
  return { ...mail, password: '', password_set: mail.password !== '' };
}

/** Rules a value must meet beyond its shape (they need the database). */
async function checkValue(ctx: AppContext, key: TSettingKey, value: unknown) {
  if (key === 'two_factor') {
    const categories = [...new Set((value as SettingValue<'two_factor'>).required_categories)];
    if (categories.length) {
      const found = await ctx.db.select({ id: schema.categories.id }).from(schema.categories).where(inArray(schema.categories.id, categories));
      const missing = categories.filter((c) => !found.some((f) => f.id === c));
      if (missing.length) throw badRequest('category_not_found', `No category ${missing.join(', ')}`);
    }
    return;
  }
  if (key !== 'password_policies') return;
  const items = (value as SettingValue<'password_policies'>).items;
  const seen = new Set<string>();
  for (const r of items) {
    const id = `${r.category}:${r.role}`;
    if (seen.has(id)) throw badRequest('validation_error', `Two policies for category ${r.category} and role ${r.role}`);
    seen.add(id);
  }
  const categories = [...new Set(items.map((r) => r.category).filter((c) => c !== 'all'))];
  if (categories.length) {
    const found = await ctx.db.select({ id: schema.categories.id }).from(schema.categories).where(inArray(schema.categories.id, categories));
    const missing = categories.filter((c) => !found.some((f) => f.id === c));
    if (missing.length) throw badRequest('category_not_found', `No category ${missing.join(', ')}`);
  }
}

/**
 * System settings of the administration console (admins only): `GET/PUT /admin/settings/{key}`
 * (a PUT merges the given top-level fields, checks the whole value with its schema, stores it
 * with its audit entry and applies it at once) and `POST /admin/settings/mail/test`.
 */
export async function adminSettingsRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const adminOnly = requireAuth(ctx, { roles: ['admin'] });

  r.get('/admin/settings/:key', { preHandler: adminOnly, schema: { params: ZKeyParams } }, async (request) => {
    const key = request.params.key;
    if (!isSettingKey(key)) throw notFound('not_found', 'No such setting');
    return answerOf(ctx, key, await ctx.settings.get(key));
  });

  r.put(
    '/admin/settings/:key',
    { preHandler: adminOnly, schema: { params: ZKeyParams, body: z.record(z.string(), z.unknown()) } },
    async (request) => {
      const key = request.params.key;
      if (!isSettingKey(key)) throw notFound('not_found', 'No such setting');
      const body = { ...request.body };
      // The answered mail password is '' (hidden): an empty one sent back keeps the stored one.
      if (key === 'mail' && body.password === '') delete body.password;
      const merged = { ...(await ctx.settings.get(key)), ...body };
      const parsed = SETTINGS[key].safeParse(merged);
      if (!parsed.success) {
        throw badRequest('validation_error', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      }
      await checkValue(ctx, key, parsed.data);
      await ctx.db.transaction(async (tx) => {
        await ctx.settings.set(key, parsed.data as never, tx);
        await audit(tx, auditActorOf(request), {
          action: 'settings.update',
          objectType: 'setting',
          objectId: key,
          objectName: key,
          categoryId: null,
          // Field names only: values may hold secrets (the mail password). The two-factor requirement in full.
          detail: key === 'two_factor' ? { fields: Object.keys(body).sort(), ...(parsed.data as SettingValue<'two_factor'>) } : { fields: Object.keys(body).sort() },
        });
      });
      await settingChanged(ctx, key);
      notifyAdmins(ctx, null, 'settings_update', { key });
      return answerOf(ctx, key, parsed.data as never);
    },
  );

  r.post('/admin/settings/mail/test', { preHandler: adminOnly, schema: { body: ZMailTestBody } }, async (request) => {
    if (!(await mailEnabled(ctx))) throw precondition('email_not_configured', 'Mail is not configured');
    try {
      await sendMail(ctx, {
        to: request.body.to,
        subject: 'Test mail from the VDI portal',
        text: 'This is a test mail sent from the administration console. Mail is working.',
      }, { raw: true });
    } catch (err) {
      const reason = err instanceof Error ? err.message.slice(0, 200) : 'unknown error';
      throw precondition('mail_send_failed', 'The test mail could not be sent', { reason });
    }
    await audit(ctx.db, auditActorOf(request), { action: 'settings.mail_test', objectType: 'setting', objectId: 'mail', objectName: 'mail', categoryId: null });
    return { sent: true };
  });
}
