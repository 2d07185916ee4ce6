// The bastion's SSH server: the user name is a bastion target's id, the key one of its authorized
// keys; the session is then relayed to the desktop's SSH server over the guest network, signed in
// with the desktop's guest credentials. Unknown names, disabled targets and desktops not started
// get the same refusal, after a delay.
import { timingSafeEqual } from 'node:crypto';
import ssh2, { type AuthContext, type Connection, type PseudoTtyInfo, type ServerChannel, type ClientChannel } from 'ssh2';
import type { AppContext } from '../../context';
import { routeOf } from './targets';
const { Client, Server, utils } = ssh2; // a CommonJS package: no named exports under Node's ESM

export type SshRoute = NonNullable<Awaited<ReturnType<typeof routeOf>>>;

const sameKey = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

function keyMatches(keys: string[], algo: string, data: Buffer) {
  for (const line of keys) {
    const parsed = utils.parseKey(line);
    if (parsed instanceof Error) continue;
    if (sameKey(parsed.getPublicSSH(), data)) return parsed;
  }
  void algo;
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createSshBastion(ctx: AppContext, opts: { hostKey: string; refusalDelayMs: number; isAllowedAddress: (ip: string) => boolean }) {
  const clients = new Set<Connection>();
  const server = new Server({ hostKeys: [opts.hostKey], ident: 'vdi-bastion' }, (client) => {
    clients.add(client);
    client.on('close', () => clients.delete(client));
    client.on('error', () => client.end());
    let route: SshRoute | null = null;
    let checkedUser: string | null = null;

    client.on('authentication', (auth: AuthContext) => {
      void (async () => {
        if (checkedUser !== auth.username) {
          checkedUser = auth.username;
          const r = await routeOf(ctx, auth.username, 'ssh').catch(() => null);
          route = r && opts.isAllowedAddress(r.host) ? r : null;
        }
        if (auth.method !== 'publickey' || !route) {
          if (!route && auth.method !== 'none') await sleep(opts.refusalDelayMs);
          return auth.reject(['publickey']);
        }
        const key = keyMatches(route.keys, auth.key.algo, auth.key.data);
        if (!key) {
          await sleep(opts.refusalDelayMs);
          return auth.reject(['publickey']);
        }
        if (!auth.signature) return auth.accept(); // a probe: this key would do
        if (key.verify(auth.blob!, auth.signature, auth.hashAlgo) !== true) return auth.reject(['publickey']);
        auth.accept();
      })().catch(() => auth.reject());
    });

    client.on('ready', () => {
      const r = route!;
      const upstream = new Client();
      let upReady = false;
      const waiting: (() => void)[] = [];
      upstream.on('ready', () => {
        upReady = true;
        for (const w of waiting.splice(0)) w();
      });
      upstream.on('error', () => client.end());
      upstream.on('close', () => client.end());
      upstream.on('keyboard-interactive', (_name, _instr, _lang, prompts, finish) => finish(prompts.map(() => r.credentials.password)));
      client.on('close', () => upstream.end());
      upstream.connect({
        host: r.host,
        port: r.port,
        username: r.credentials.username,
        password: r.credentials.password,
        tryKeyboard: true,
        readyTimeout: 20_000,
        // The guest network is private to this server; the guest's host key is not pinned.
        hostVerifier: () => true,
      });
      const whenUp = (f: () => void) => (upReady ? f() : waiting.push(f));

      client.on('session', (acceptSession) => {
        const session = acceptSession();
        let pty: PseudoTtyInfo | null = null;
        const env: Record<string, string> = {};
        let remote: ClientChannel | null = null;

        const bind = (ch: ServerChannel, err: Error | undefined, stream: ClientChannel) => {
          if (err) {
            ch.stderr.write('the desktop refused the session\r\n');
            ch.exit(1);
            ch.end();
            return;
          }
          remote = stream;
          ch.pipe(stream);
          stream.pipe(ch);
          stream.stderr.pipe(ch.stderr);
          stream.on('exit', (code: number | null, signal?: string) => {
            if (typeof code === 'number') ch.exit(code);
            else if (signal) ch.exit(signal.replace(/^SIG/, ''), false, '');
          });
          stream.on('close', () => ch.end());
          ch.on('close', () => stream.close());
        };
        const ptyOpts = () => (pty ? { term: pty.term ?? 'vt100', rows: pty.rows, cols: pty.cols, width: pty.width, height: pty.height, modes: pty.modes } : false);

        session.on('pty', (accept, _reject, info) => {
          pty = info;
          accept?.();
        });
        session.on('env', (accept, _reject, info) => {
          if (Object.keys(env).length < 32) env[info.key] = info.val;
          accept?.();
        });
        session.on('window-change', (accept, _reject, info) => {
          remote?.setWindow(info.rows, info.cols, info.height, info.width);
          accept?.();
        });
        session.on('signal', (accept, _reject, info) => {
          remote?.signal(info.name);
          accept?.();
        });
        session.on('shell', (accept) => {
          const ch = accept();
          whenUp(() => upstream.shell(ptyOpts(), { env }, (err, stream) => bind(ch, err, stream)));
        });
        session.on('exec', (accept, _reject, info) => {
          const ch = accept();
          whenUp(() => upstream.exec(info.command, { pty: ptyOpts(), env }, (err, stream) => bind(ch, err, stream)));
        });
        session.on('subsystem', (accept, _reject, info) => {
          const ch = accept();
          whenUp(() => upstream.subsys(info.name, (err, stream) => bind(ch, err, stream)));
        });
      });
    });
  });
  server.on('error', (err: Error) => ctx.log.warn({ err: err.message }, 'bastion ssh server error'));
  return {
    server,
    close() {
      for (const c of clients) c.end();
      server.close();
    },
  };
}
