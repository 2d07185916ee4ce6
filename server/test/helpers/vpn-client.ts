// The user's computer in the VPN tests: a network namespace of the test (`vpnb` in its names) linked
// to the root namespace by a veth, running wireguard-go with the file the portal gave.
import { scaled } from './slowdown';
import { registerNamespace } from '../../../scripts/lib/test-run.mjs';
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runClient } from './bastion-clients';
import { until } from './wait';

const sh = async (cmd: string, args: string[]) => {
  const r = await runClient(cmd, args, 30_000);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** The fields of a wg-quick style file, as a WireGuard client reads them. */
export function parseWgQuick(text: string) {
  const get = (k: string) => new RegExp(`^${k}\\s*=\\s*(.+)$`, 'm').exec(text)?.[1]?.trim() ?? '';
  return { address: get('Address'), privateKey: get('PrivateKey'), publicKey: get('PublicKey'), endpoint: get('Endpoint'), allowedIps: get('AllowedIPs') };
}

export type UserComputer = Awaited<ReturnType<typeof userComputer>>;

const freeUdpPort = () =>
  new Promise<number>((resolve) => {
    const s = createSocket('udp4');
    s.bind(0, '0.0.0.0', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });

/**
 * A test server's settings for the user VPN (its endpoint on the user computer's side of the veth,
 * a free UDP port, the users' addresses in another free /24) and the bastion (ports chosen by the
 * system on loopback, names under `domain`).
 */
export async function vpnBastionEnv(pc: UserComputer, usersNetwork: string, domain: string): Promise<Record<string, string>> {
  return {
    VPN_PORT: String(await freeUdpPort()),
    VPN_HOST: pc.hostAddress,
    VPN_USERS_NETWORK: usersNetwork,
    BASTION_SSH_PORT: '0',
    BASTION_HTTP_PORT: '0',
    BASTION_HTTPS_PORT: '0',
    BASTION_HOST: '127.0.0.1',
    BASTION_DOMAIN: domain,
  };
}

/** `subnet`: a free /24 whose .1 goes to the root end of the veth (the server's address for this user) and .2 to the user. */
export async function userComputer(subnet: string) {
  const tag = randomBytes(3).toString('hex');
  const ns = `vpnb-${tag}`;
  const hostLink = `vpnb${tag}h`;
  const wgLink = `vpnb${tag}w`;
  const base = subnet.split('/')[0]!.split('.').slice(0, 3).join('.');
  const hostAddress = `${base}.1`;
  const dir = mkdtempSync(join(tmpdir(), 'vpnb-client-'));
  let wg: ChildProcess | null = null;
  registerNamespace(ns);
  await sh('ip', ['netns', 'add', ns]);
  await sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  await sh('ip', ['link', 'add', hostLink, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
  await sh('ip', ['addr', 'add', `${hostAddress}/30`, 'dev', hostLink]);
  await sh('ip', ['link', 'set', hostLink, 'up']);
  await sh('ip', ['-n', ns, 'addr', 'add', `${base}.2/30`, 'dev', 'eth0']);
  await sh('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);

  const inNs = (cmd: string, args: string[], ms = 30_000) => runClient('ip', ['netns', 'exec', ns, cmd, ...args], ms);

  return {
    ns,
    hostAddress,
    /** Brings the tunnel up (or reconfigures it) with a downloaded file. */
    async use(conf: string) {
      const c = parseWgQuick(conf);
      if (!wg) {
        wg = spawn('ip', ['netns', 'exec', ns, 'wireguard-go', '-f', wgLink], { stdio: 'ignore' });
        await until('the client tunnel', async () => (await runClient('wg', ['show', wgLink])).code === 0, 10_000);
      }
      const file = join(dir, 'wg.conf');
      writeFileSync(file, `[Interface]\nPrivateKey = ${c.privateKey}\n\n[Peer]\nPublicKey = ${c.publicKey}\nEndpoint = ${c.endpoint}\nAllowedIPs = ${c.allowedIps}\nPersistentKeepalive = 25\n`, { mode: 0o600 });
      await sh('wg', ['setconf', wgLink, file]);
      await sh('ip', ['-n', ns, 'addr', 'flush', 'dev', wgLink]);
      await sh('ip', ['-n', ns, 'addr', 'add', `${c.address}/32`, 'dev', wgLink]);
      await sh('ip', ['-n', ns, 'link', 'set', wgLink, 'up']);
      for (const net of c.allowedIps.split(',')) await sh('ip', ['-n', ns, 'route', 'replace', net.trim(), 'dev', wgLink]);
    },
    /** Seconds since the last handshake with the server (null: none). */
    async lastHandshake(): Promise<number | null> {
      const out = (await runClient('wg', ['show', wgLink, 'latest-handshakes'])).stdout.trim().split(/\s+/)[1];
      const t = Number(out);
      return t > 0 ? Date.now() / 1000 - t : null;
    },
    curl: (url: string, ms = 8) => inNs('curl', ['-sS', '--max-time', String(ms), url], (ms + 10) * 1000),
    /** The first bytes a TCP port sends (an SSH banner), through the tunnel. */
    banner: (host: string, port: number) => inNs('timeout', ['8', 'bash', '-c', `exec 3<>/dev/tcp/${host}/${port} && head -c 20 <&3`], 20_000),
    /** xfreerdp with an .rdp file's text, from the user's computer (through its tunnel): signs in, then ends (`+auth-only`). */
    rdpAuthOnly(rdp: string) {
      const file = join(dir, 'desktop.rdp');
      writeFileSync(file, rdp, { mode: 0o600 });
      // The time limit inside xvfb-run (around xfreerdp alone): xvfb-run then always ends its Xvfb itself
      // (a limit around xvfb-run killed only the script, and its Xvfb outlived the test on a loaded machine).
      return inNs('xvfb-run', ['-a', 'timeout', String(Math.ceil(scaled(60_000) / 1000)), 'xfreerdp', file, '/cert:ignore', '+auth-only'], 90_000);
    },
    async close() {
      wg?.kill('SIGTERM');
      await runClient('ip', ['netns', 'del', ns]);
      await runClient('ip', ['link', 'del', hostLink]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
