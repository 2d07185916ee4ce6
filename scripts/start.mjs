#!/usr/bin/env node
// `npm start`: installs what is missing, builds the web, migrates and seeds on first start,
// and serves API + socket + web on one port (PORT, default 8080).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ensureDebianPackages, ensureNpmPackages, ensureWebBuild, GUEST_NETWORK_PACKAGES, log, root } from './lib/setup.mjs';

ensureNpmPackages();
// Desktops are QEMU machines; disks are qcow2 files made with qemu-img.
ensureDebianPackages(['qemu-system-x86', 'qemu-utils', ...GUEST_NETWORK_PACKAGES]);
ensureWebBuild();
log('Starting the server');
const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'server', 'src', 'main.ts')], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, DATA_DIR: process.env.DATA_DIR ?? join(root, 'data') },
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
