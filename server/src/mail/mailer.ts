import nodemailer from 'nodemailer';
import { parseSetting } from '../settings';
import { schema, type Db } from '../db';
import { eq } from 'drizzle-orm';
import type { TMailSetting } from '@vdi/contracts';
import type { Config } from '../config';
import { ApiError, precondition } from '../http/errors';

export type Mail = { to: string; subject: string; text: string };
/** The environment's mail (SMTP_* variables): what sends when the admin's `mail` setting is off. */
export type Mailer = { readonly enabled: boolean; send(mail: Mail): Promise<void> };

type Smtp = { host: string; port: number; secure: boolean; user?: string; password?: string };

function transportFor(smtp: Smtp) {
  return nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    ignoreTLS: !smtp.secure,
    // A mail to a dead server must not hang the request that sends it.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
    auth: smtp.user ? { user: smtp.user, pass: smtp.password ?? '' } : undefined,
  });
}

/** SMTP through nodemailer from the SMTP_* variables; without SMTP_HOST the product says mail is off instead of pretending. */
export function createMailer(config: Config): Mailer {
  if (!config.smtp) {
    return {
      enabled: false,
      send: async () => {
        throw new Error('Mail is not configured (SMTP_HOST)');
      },
    };
  }
  const transport = transportFor(config.smtp);
  return {
    enabled: true,
    async send(mail) {
      await transport.sendMail({ from: config.mailFrom, ...mail });
    },
  };
}

type Ctx = { mailer: Mailer; db: Db };
const SETTING_TTL_MS = 5_000;
const cached = new WeakMap<Db, { at: number; value: Promise<TMailSetting | null> }>();
let transport: { key: string; send: ReturnType<typeof transportFor> } | null = null;

/**
 * The admin's `mail` setting when it is on (console → Mail), read from the database at most every 5 s
 * per process; a change made through any server process is forgotten by all at once
 * (`forgetMailSetting`, through modules/admin/settings/apply.ts).
 */
async function mailSetting(ctx: Ctx): Promise<TMailSetting | null> {
  const hit = cached.get(ctx.db);
  if (hit && Date.now() - hit.at < SETTING_TTL_MS) return hit.value;
  const value = (async () => {
    const [row] = await ctx.db.select({ value: schema.config.value }).from(schema.config).where(eq(schema.config.key, 'mail'));
    const setting = parseSetting('mail', row?.value);
    return setting.enabled && setting.host ? setting : null;
  })().catch(() => null);
  cached.set(ctx.db, { at: Date.now(), value });
  return value;
}

/** A change of the `mail` setting applies to this process's next mail at once. */
export function forgetMailSetting(db: Db) {
  cached.delete(db);
}

/** Whether mail can be sent: the admin's mail setting is on, or SMTP_HOST is configured. */
export async function mailEnabled(ctx: Ctx): Promise<boolean> {
  return (await mailSetting(ctx)) !== null || ctx.mailer.enabled;
}

/**
 * Sends one mail, through the admin's mail setting when it is on, else the environment's; mail off
 * answers 428 `email_not_configured`, a refused send 504 `email_send_failed` (the callers send before
 * they store, so a failure leaves nothing half-done). `raw` lets the failure through as it is (the
 * console's test mail shows its reason).
 */
export async function sendMail(ctx: Ctx, mail: Mail, opts: { raw?: boolean } = {}) {
  const setting = await mailSetting(ctx);
  if (!setting && !ctx.mailer.enabled) throw precondition('email_not_configured', 'E-mail is not configured on this server');
  try {
    if (setting) {
      const key = JSON.stringify([setting.host, setting.port, setting.secure, setting.user, setting.password]);
      if (transport?.key !== key) transport = { key, send: transportFor({ ...setting, user: setting.user || undefined }) };
      await transport.send.sendMail({ from: setting.from || 'VDI portal <no-reply@localhost>', ...mail });
    } else {
      await ctx.mailer.send(mail);
    }
  } catch (err) {
    if (opts.raw) throw err;
    throw new ApiError('gateway_timeout', 'email_send_failed', 'The mail server did not accept the message; try again later');
  }
}
