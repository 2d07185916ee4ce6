// A real RDP server for the tests: Debian's xrdp (TLS, Xvnc sessions) run inside a network
// namespace of its own, reached from the host over a veth pair, so it never occupies the host's
// port 3389 and its address is like a guest's (not loopback). A throwaway user whose X session is
// an xterm: what is typed into it runs in a shell (`touch MARK` in its home proves keys arrived).
// Needs root (namespaces, useradd); `xrdpMissing()` says what this host lacks to run it.
import { firstMissing, missingPrograms, missingRoot, type Missing } from './can-run';
import { registerNamespace } from '../../../scripts/lib/test-run.mjs';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './wait';

export type XrdpHost = {
  /** the server's address as the portal reaches it (inside the namespace) */
  address: string;
  port: number;
  username: string;
  password: string;
  home: string;
  /** xrdp-sesman's log (authentication outcomes: "created session", "AUTHFAIL") */
  sesmanLog(): string;
  stop(): Promise<void>;
};

/** What this host lacks to run an xrdp stand-in, if anything. */
export const xrdpMissing = (): Missing => firstMissing(missingRoot(), missingPrograms('xrdp', 'xrdp-sesman', 'Xvnc', 'xterm', 'ip'));

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** Starts xrdp in a fresh namespace `rdpx<n>`; `stop()` removes the processes, the namespace, its veth and the user. */
export async function startXrdpHost(opts: { xsession?: string } = {}): Promise<XrdpHost> {
  const n = randomBytes(2).readUInt16BE(0) % 4000;
  const ns = `rdpx${n}`;
  const hostLink = `rdpx${n}h`;
  const nsLink = `rdpx${n}n`;
  const subnet = `10.23${n % 10}.${Math.floor(n / 10) % 250}`;
  const hostAddr = `${subnet}.1`;
  const address = `${subnet}.2`;
  const dir = mkdtempSync(join(tmpdir(), 'rdp-xrdp-'));
  chmodSync(dir, 0o755);
  const username = `rdpt${n}`;
  const password = randomBytes(9).toString('base64url');
  const home = join(dir, 'home');
  const children: ChildProcess[] = [];

  const cleanup = async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
    // The sessions' X servers and the user's processes.
    try {
      execFileSync('pkill', ['-KILL', '-u', username], { stdio: 'ignore' });
    } catch {
      /* none */
    }
    try {
      ip('netns', 'del', ns);
    } catch {
      /* gone */
    }
    try {
      ip('link', 'del', hostLink);
    } catch {
      /* went with the namespace */
    }
    try {
      execFileSync('userdel', ['-f', username], { stdio: 'ignore' });
    } catch {
      /* not made */
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    registerNamespace(ns);
    ip('netns', 'add', ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('link', 'add', hostLink, 'type', 'veth', 'peer', 'name', nsLink, 'netns', ns);
    ip('addr', 'add', `${hostAddr}/30`, 'dev', hostLink);
    ip('link', 'set', hostLink, 'up');
    ip('-n', ns, 'addr', 'add', `${address}/30`, 'dev', nsLink);
    ip('-n', ns, 'link', 'set', nsLink, 'up');

    execFileSync('useradd', ['-M', '-d', home, '-s', '/bin/bash', username], { stdio: 'ignore' });
    execFileSync('chpasswd', { input: `${username}:${password}\n` });
    mkdirSync(home);
    const xsession = opts.xsession ?? `#!/bin/sh\ncd "$HOME"\nexec xterm -fa Monospace -fs 14 -geometry 100x30+0+0 -bg '#1d3557' -fg white -e bash --noprofile --norc\n`;
    writeFileSync(join(home, '.xsession'), xsession, { mode: 0o755 });
    writeFileSync(join(home, 'startwm.sh'), `#!/bin/sh\nexec /bin/sh "$HOME/.xsession"\n`, { mode: 0o755 });
    const uid = Number(execFileSync('id', ['-u', username]).toString().trim());
    const gid = Number(execFileSync('id', ['-g', username]).toString().trim());
    for (const f of ['', '.xsession', 'startwm.sh']) chownSync(join(home, f), uid, gid);

    // Own configuration files: our log files, Xvnc sessions without asking, a display range of our own.
    const xrdpIni = readFileSync('/etc/xrdp/xrdp.ini', 'utf8')
      .replace(/^autorun=.*$/m, 'autorun=Xvnc')
      // As the RDP guest runs it: uncompressed bitmaps, which the proxy can crop for the web client (src/rdp/bitmap-fix.ts).
      .replace(/^bitmap_compression=.*$/m, 'bitmap_compression=false')
      .replace(/^bitmap_cache=.*$/m, 'bitmap_cache=false')
      .replace(/^LogFile=.*$/m, `LogFile=${join(dir, 'xrdp.log')}`)
      .replace(/^EnableSyslog=.*$/gm, 'EnableSyslog=false');
    writeFileSync(join(dir, 'xrdp.ini'), xrdpIni);
    const sesmanIni = readFileSync('/etc/xrdp/sesman.ini', 'utf8')
      .replace(/^X11DisplayOffset=.*$/m, `X11DisplayOffset=${200 + (n % 50) * 4}`)
      .replace(/^UserWindowManager=.*$/m, 'UserWindowManager=startwm.sh')
      .replace(/^DefaultWindowManager=.*$/m, `DefaultWindowManager=${join(home, 'startwm.sh')}`)
      .replace(/^LogFile=.*$/m, `LogFile=${join(dir, 'sesman.log')}`)
      .replace(/^EnableSyslog=.*$/gm, 'EnableSyslog=false');
    writeFileSync(join(dir, 'sesman.ini'), sesmanIni);

    const run = (cmd: string, args: string[]) => {
      const child = spawn('ip', ['netns', 'exec', ns, cmd, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr!.on('data', () => undefined);
      children.push(child);
      return child;
    };
    run('xrdp-sesman', ['--nodaemon', '--config', join(dir, 'sesman.ini')]);
    run('xrdp', ['--nodaemon', '--config', join(dir, 'xrdp.ini')]);
    await until('xrdp to listen', () => canConnect(address, 3389), 20_000);
  } catch (err) {
    await cleanup();
    throw err;
  }

  return {
    address,
    port: 3389,
    username,
    password,
    home,
    sesmanLog: () => (existsSync(join(dir, 'sesman.log')) ? readFileSync(join(dir, 'sesman.log'), 'utf8') : ''),
    stop: cleanup,
  };
}

export function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** For trying things by hand: `npx tsx server/test/helpers/xrdp-host.ts` keeps one running until Ctrl+C. */
if (process.argv[1]?.endsWith('xrdp-host.ts')) {
  const host = await startXrdpHost();
  console.log(JSON.stringify({ address: host.address, username: host.username, password: host.password, home: host.home }));
  const bye = () => void host.stop().then(() => process.exit(0));
  process.on('SIGINT', bye);
  process.on('SIGTERM', bye);
}
