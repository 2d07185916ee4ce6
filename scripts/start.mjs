#!/usr/bin/env node
// `npm start`: installs what is missing, builds the web, migrates and seeds on first start,
// and serves API + socket + web on one port (PORT, default 8080).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ensureDebianPackages, ensureNpmPackages, ensureWebBuild, GUEST_NETWORK_PACKAGES, log, root, VPN_PACKAGES } from './lib/setup.mjs';

ensureNpmPackages();
// Desktops are QEMU machines; disks are qcow2 files made with qemu-img.
// openssl: the RD Gateway's self-signed certificate on first start.
ensureDebianPackages(['qemu-system-x86', 'qemu-utils', 'python3', 'openssl', ...GUEST_NETWORK_PACKAGES, ...VPN_PACKAGES]);
ensureWebBuild();
// Links in mails and files come only from a configured public address: on one machine, this one.
const publicUrl = process.env.PUBLIC_URL ?? `http://localhost:${process.env.PORT ?? '8080'}`;
if (!process.env.PUBLIC_URL) log(`PUBLIC_URL is not set: using ${publicUrl} for links in mails and files (set PUBLIC_URL to the address people use)`);
log('Starting the server');
const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'server', 'src', 'main.ts')], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    DATA_DIR: process.env.DATA_DIR ?? join(root, 'data'),
    PUBLIC_URL: publicUrl,
    // The bastion's listeners for the demo (the admin still turns the bastion on); `off` turns one off.
    BASTION_SSH_PORT: process.env.BASTION_SSH_PORT ?? '2222',
    BASTION_HTTP_PORT: process.env.BASTION_HTTP_PORT ?? '8081',
    BASTION_HTTPS_PORT: process.env.BASTION_HTTPS_PORT ?? '8444',
  },
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
