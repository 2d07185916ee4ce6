// The load balancer of the cluster mode: Debian's HAProxy running the configuration the repository ships
// (deploy/haproxy/haproxy.cfg) with this run's addresses put in — its `bind` lines and the `server` lines
// of the portal's backend, nothing else. Used by `npm run cluster`, the bench and the tests' helper
// (server/test/helpers/processes.ts). Plain Node, no dependencies.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { root } from './setup.mjs';

export const HAPROXY_CONFIG = join(root, 'deploy', 'haproxy', 'haproxy.cfg');

/**
 * The shipped configuration with `bind` (the portal's frontend, host:port), `stats` (the stats page,
 * host:port) and `servers` ([{ name, address: host:port }]) put in.
 */
export function haproxyConfig({ bind, stats, servers }) {
  const out = [];
  let section = '';
  for (const line of readFileSync(HAPROXY_CONFIG, 'utf8').split('\n')) {
    if (/^\S/.test(line)) section = line.trim();
    const setting = line.trim();
    if (section === 'frontend portal' && setting.startsWith('bind ')) out.push(`    bind ${bind}`);
    else if (section === 'listen stats' && setting.startsWith('bind ')) out.push(`    bind ${stats}`);
    // The error pages stay where they are shipped (the written copy lives elsewhere).
    else if (setting.startsWith('errorfile ')) out.push(line.replace(/(errorfile \d+ )(\S+)/, (_, head, path) => `${head}${join(dirname(HAPROXY_CONFIG), path)}`));
    else if (section === 'backend processes' && setting.startsWith('server ')) {
      if (!out.at(-1)?.startsWith('    server ')) for (const s of servers) out.push(`    server ${s.name} ${s.address}`);
    } else out.push(line);
  }
  return out.join('\n');
}

/**
 * HAProxy in the foreground (`-db`) on `config` (written to dir/haproxy.cfg), as a child process.
 * Answers { child, output(), stop() }: stop ends it (SIGTERM, SIGKILL after 5 s) and resolves when it has.
 */
export function startHaproxy({ dir, config, stdio = 'pipe' }) {
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', stdio, stdio] });
  let out = '';
  if (stdio === 'pipe') {
    child.stdout.on('data', (b) => (out += b.toString()));
    child.stderr.on('data', (b) => (out += b.toString()));
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child,
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** The backend's servers as HAProxy sees them now (its stats page as CSV): name → status (UP, DOWN, …). */
export async function serverStates(statsUrl) {
  const csv = await (await fetch(`${statsUrl};csv`)).text();
  const states = {};
  for (const line of csv.split('\n')) {
    const [proxy, name, , , , , , , , , , , , , , , , status] = line.split(',');
    if (proxy === 'processes' && name && name !== 'BACKEND' && name !== 'FRONTEND') states[name] = status;
  }
  return states;
}
