import nodemailer from 'nodemailer';
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

/**
 * Sends one mail; mail off answers 428 `email_not_configured`, an SMTP failure 504 `email_send_failed`
 * (the callers send before they store, so a failure leaves nothing half-done).
 */
export async function sendMail(ctx: { mailer: Mailer }, mail: Mail) {
  if (!ctx.mailer.enabled) throw precondition('email_not_configured', 'E-mail is not configured on this server');
  try {
    await ctx.mailer.send(mail);
  } catch {
    throw new ApiError('gateway_timeout', 'email_send_failed', 'The mail server did not accept the message; try again later');
  }
}
