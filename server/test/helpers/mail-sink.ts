import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export type CapturedMail = { to: string[]; raw: string };

/** A real SMTP server on loopback that keeps what it receives, for tests of mail flows. */
export async function startMailSink(listenPort = 0) {
  const mails: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, cb) {
      let raw = '';
      stream.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    mails,
    /** The first link in the last mail to `to` (quoted-printable soft breaks undone). */
    linkTo(to: string): string | undefined {
      const mail = [...mails].reverse().find((m) => m.to.includes(to));
      const text = mail?.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      return text?.match(/https?:\/\/\S+/)?.[0];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
