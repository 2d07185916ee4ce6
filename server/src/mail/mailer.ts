import nodemailer from 'nodemailer';
import type { Config } from '../config';

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
