// The bastion's listeners (SSH, HTTP, HTTPS), each on its configured port (off when not set), and
// what `GET /user/config` says about it.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import type { AppContext } from '../../context';
import { configuredPublicUrl } from '../../http/base-url';
import { createSshBastion } from './ssh';
import { createNameProxy } from './proxy';
const { utils } = ssh2;

/**
 * An ed25519 key ssh2 can read back. Its generator drops a leading zero byte of the public key
 * (about 1 key in 150: a 31-byte key, "Malformed OpenSSH private key" when read), so a key is
 * kept only once it parses.
 */
export function newHostKey(): string {
  for (;;) {
    const key = utils.generateKeyPairSync('ed25519').private;
    if (!(utils.parseKey(key) instanceof Error)) return key;
  }
}

/** The host key, made once under DATA_DIR/bastion (0600); one that cannot be read (made by an earlier version) is made again. */
function hostKey(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, 'ssh_host_ed25519_key');
  if (existsSync(file) && utils.parseKey(readFileSync(file, 'utf8')) instanceof Error) rmSync(file);
  if (!existsSync(file)) writeFileSync(file, newHostKey(), { mode: 0o600, flag: 'wx' });
  return readFileSync(file, 'utf8');
}

const listen = (server: Server, port: number, host: string) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });

export type Bastion = ReturnType<typeof createBastion>;

export function createBastion(ctx: AppContext, opts: { isAllowedAddress?: (ip: string) => boolean; refusalDelayMs?: number } = {}) {
  const cfg = ctx.config.bastion;
  const ports: { ssh: number | null; http: number | null; https: number | null } = { ssh: null, http: null, https: null };
  const closers: (() => void)[] = [];
  const isAllowedAddress = opts.isAllowedAddress ?? (() => true);
  /**
   * The one bastion domain, for the proxy's matching and for the addresses shown alike: BASTION_DOMAIN,
   * else the configured public address's host, else `localhost` (names under it reach loopback on
   * every system, so the default shown address is one that is served).
   */
  const domain = async () => {
    if (cfg.domain) return cfg.domain;
    const url = await configuredPublicUrl(ctx);
    return url ? new URL(url).hostname : 'localhost';
  };

  async function start() {
    const tries: [keyof typeof ports, number | null, () => { server: Server; close(): void }][] = [
      ['ssh', cfg.sshPort, () => {
        const s = createSshBastion(ctx, { hostKey: hostKey(join(ctx.config.dataDir, 'bastion')), refusalDelayMs: opts.refusalDelayMs ?? 1500, isAllowedAddress });
        return { server: s.server as unknown as Server, close: s.close };
      }],
      ['http', cfg.httpPort, () => createNameProxy(ctx, 'http', { domain, isAllowedAddress })],
      ['https', cfg.httpsPort, () => createNameProxy(ctx, 'https', { domain, isAllowedAddress })],
    ];
    for (const [name, port, make] of tries) {
      if (port === null) continue;
      const l = make();
      try {
        ports[name] = await listen(l.server, port, cfg.host);
        closers.push(l.close);
      } catch (err) {
        l.close();
        ctx.log.warn({ err: err instanceof Error ? err.message : String(err), listener: name }, 'bastion listener not started');
      }
    }
  }

  return {
    start,
    ports,
    domain,
    /** The `GET /user/config` fields (reference §2.4): ports as strings, the SSH port only when the bastion may be used. */
    async userConfig() {
      const enabled = (await ctx.settings.get('bastion')).enabled;
      const listening = ports.ssh !== null || ports.http !== null || ports.https !== null;
      const can = enabled && listening;
      return {
        http_port: String(cfg.publicHttpPort ?? ports.http ?? 80),
        https_port: String(cfg.publicHttpsPort ?? ports.https ?? 443),
        bastion_domain: can ? await domain() : null,
        bastion_ssh_port: can && ports.ssh !== null ? String(ports.ssh) : null,
        can_use_bastion: can,
      };
    },
    /** The listeners another process of this machine runs (this one runs none): what `userConfig` shows. */
    follow(running: typeof ports) {
      if (closers.length === 0) Object.assign(ports, running);
    },
    close() {
      for (const c of closers.splice(0)) c();
      Object.assign(ports, { ssh: null, http: null, https: null });
    },
  };
}
