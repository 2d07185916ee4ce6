import nodemailer from 'nodemailer';
import type { TMailSetting } from '@vdi/contracts';
import type { Config } from '../config';

export type Mail = { to: string; subject: string; text: string };
export type Mailer = {
  readonly enabled: boolean;
  send(mail: Mail): Promise<void>;
  /** Applies the admin's mail setting (console): when enabled it replaces the SMTP_* variables, at once. */
  configure?(setting: TMailSetting): void;
};

type Smtp = NonNullable<Config['smtp']>;

function transportFor(smtp: Smtp, from: string) {
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    ignoreTLS: !smtp.secure,
    // A test mail to a dead server must not hang the admin's request.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
    auth: smtp.user ? { user: smtp.user, pass: smtp.password ?? '' } : undefined,
  });
  return async (mail: Mail) => {
    await transport.sendMail({ from, ...mail });
  };
}

/**
 * SMTP through nodemailer: the SMTP_* variables, or the admin's `mail` setting once enabled
 * (`configure`, called at start and on every change of the setting). Without either the product
 * says mail is off instead of pretending.
 */
export function createMailer(config: Config): Mailer {
  const fromEnv = config.smtp ? transportFor(config.smtp, config.mailFrom) : null;
  let send: ((mail: Mail) => Promise<void>) | null = fromEnv;
  return {
    get enabled() {
      return send !== null;
    },
    async send(mail) {
      if (!send) throw new Error('Mail is not configured (SMTP_HOST)');
      await send(mail);
    },
    configure(setting) {
      send =
        setting.enabled && setting.host
          ? transportFor(
              { host: setting.host, port: setting.port, secure: setting.secure, user: setting.user || undefined, password: setting.password },
              setting.from || config.mailFrom,
            )
          : fromEnv;
    },
  };
}
