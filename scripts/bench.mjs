#!/usr/bin/env node
// `npm run bench`: the portal's hot paths beside raw baselines measured in the same run, on the
// embedded database and on PostgreSQL (the local Debian cluster). Never a test; see docs/development.md.
// Options (after `--`): --only user,desktops,create,deployment,fanout,web,vnc,rdp,admin-desktops,usage,backup,cluster,processes  --mode pglite|postgres|both  --quick
import { join } from 'node:path';
import { CLUSTER_PACKAGES, dropPostgresRole, ensureDebianPackages, ensureNpmPackages, ensureSupportedNode, ensurePostgres, ensureWebBuild, GUEST_NETWORK_PACKAGES, RDP_TEST_PACKAGES, root, run } from './lib/setup.mjs';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  return args[i].includes('=') ? args[i].split('=')[1] : args[i + 1];
};
const mode = opt('--mode') ?? 'both';
const only = opt('--only');

// Under a Node older than the product needs, everything below runs again under the pinned one.
await ensureSupportedNode();
ensureNpmPackages();
const wants = (row) => !only || only.split(',').includes(row);
ensureDebianPackages(['qemu-system-x86', 'qemu-utils', 'python3', ...(wants('web') ? ['chromium'] : []), ...(wants('rdp') ? [...GUEST_NETWORK_PACKAGES, ...RDP_TEST_PACKAGES, 'xvfb'] : []), ...(wants('cluster') || wants('processes') ? CLUSTER_PACKAGES : []), ...(wants('fanout') && mode !== 'pglite' ? ['redis-server'] : [])]);
if (wants('web')) ensureWebBuild();
const env = { ...process.env };
if (mode !== 'pglite') {
  const url = ensurePostgres();
  if (url) env.BENCH_PG_ADMIN_URL = url;
}
process.on('exit', () => dropPostgresRole(env.BENCH_PG_ADMIN_URL));
try {
  run(process.execPath, ['--import', 'tsx', join(root, 'server', 'bench', 'bench.ts'), ...args], { env });
} catch {
  process.exitCode = 1;
}
