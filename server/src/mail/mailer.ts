import nodemailer from 'nodemailer';
import { inArray } from 'drizzle-orm';
import { schema, type Db } from '../db';
import type { Config } from '../config';
import { ApiError, precondition } from '../http/errors';

export type Mail = { to: string; subject: string; text: string };
export type Mailer = { enabled: boolean; send(mail: Mail): Promise<void> };

/** SMTP through nodemailer; without SMTP_HOST the product says mail is off instead of pretending. */
export function createMailer(config: Config): Mailer {
  if (!config.smtp) {
    return {
      enabled: false,
      send: async () => {
        throw new Error('Mail is not configured (SMTP_HOST)');
      },
    };
  }
  const transport = nodemailer.createTransport({
    host: config.smtp.host,
    port: config.smtp.port,
    secure: config.smtp.secure,
    ignoreTLS: !config.smtp.secure,
    auth: config.smtp.user ? { user: config.smtp.user, pass: config.smtp.password ?? '' } : undefined,
  });
  return {
    enabled: true,
    async send(mail) {
      await transport.sendMail({ from: config.mailFrom, ...mail });
    },
  };
}

/** SMTP as an admin may store it in the settings (`smtp` or `mail`); read raw, so any of the usual field names works. */
export type SmtpSetting = { host: string; port: number; secure: boolean; user?: string; password?: string; from?: string };

export function smtpFromSetting(raw: unknown): SmtpSetting | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  const s = (k: string) => (typeof r[k] === 'string' && r[k] ? (r[k] as string) : undefined);
  const host = s('host') ?? s('server');
  if (r.enabled === false || !host) return null;
  const port = Number(r.port ?? (r.secure === true || r.ssl === true ? 465 : 25));
  return {
    host,
    port: Number.isInteger(port) && port > 0 && port < 65536 ? port : 25,
    secure: r.secure === true || r.ssl === true || r.tls === true,
    user: s('user') ?? s('username'),
    password: s('password'),
    from: s('from') ?? s('sender') ?? s('mail_from'),
  };
}

type Ctx = { mailer: Mailer; db: Db };
const SETTING_TTL_MS = 5_000;
const cached = new WeakMap<object, { at: number; value: Promise<SmtpSetting | null> }>();
const transports = new Map<string, ReturnType<typeof nodemailer.createTransport>>();

/** The SMTP setting, read at most every 5 s per process (the sign-in page and the profile ask often). */
async function smtpSetting(ctx: Ctx): Promise<SmtpSetting | null> {
  const hit = cached.get(ctx.db);
  if (hit && Date.now() - hit.at < SETTING_TTL_MS) return hit.value;
  const value = (async () => {
    const rows = await ctx.db.select().from(schema.config).where(inArray(schema.config.key, ['smtp', 'mail']));
    for (const key of ['smtp', 'mail']) {
      const found = smtpFromSetting(rows.find((row) => row.key === key)?.value);
      if (found) return found;
    }
    return null;
  })().catch(() => null);
  cached.set(ctx.db, { at: Date.now(), value });
  return value;
}

/** Whether mail can be sent: an SMTP setting is on, or SMTP_HOST is configured. */
export async function mailEnabled(ctx: Ctx): Promise<boolean> {
  return (await smtpSetting(ctx)) !== null || ctx.mailer.enabled;
}

/**
 * Sends one mail, through the SMTP setting when there is one, else the environment's; mail off answers
 * 428 `email_not_configured`, a refused send 504 `email_send_failed` (the callers send before they
 * store, so a failure leaves nothing half-done).
 */
export async function sendMail(ctx: Ctx, mail: Mail) {
  const setting = await smtpSetting(ctx);
  if (!setting && !ctx.mailer.enabled) throw precondition('email_not_configured', 'E-mail is not configured on this server');
  try {
    if (setting) {
      const key = JSON.stringify(setting);
      let transport = transports.get(key);
      if (!transport) {
        transports.clear();
        transport = nodemailer.createTransport({
          host: setting.host,
          port: setting.port,
          secure: setting.secure,
          ignoreTLS: !setting.secure,
          auth: setting.user ? { user: setting.user, pass: setting.password ?? '' } : undefined,
        });
        transports.set(key, transport);
      }
      await transport.sendMail({ from: setting.from ?? 'VDI portal <no-reply@localhost>', ...mail });
    } else {
      await ctx.mailer.send(mail);
    }
  } catch {
    throw new ApiError('gateway_timeout', 'email_send_failed', 'The mail server did not accept the message; try again later');
  }
}
