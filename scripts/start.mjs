#!/usr/bin/env node
// `npm start`: installs what is missing, builds the web, migrates and seeds on first start,
// and serves API + socket + web on one port (PORT, default 8080).
import { ensureDebianPackages, ensureNpmPackages, ensureSupportedNode, ensureWebBuild, GUEST_NETWORK_PACKAGES, log, startServer, VPN_PACKAGES } from './lib/setup.mjs';

// Under a Node older than the product needs, everything below runs again under the pinned one.
await ensureSupportedNode();
ensureNpmPackages();
// Desktops are QEMU machines; disks are qcow2 files made with qemu-img.
// openssl: the RD Gateway's self-signed certificate on first start, and each SAML provider's key pair.
ensureDebianPackages(['qemu-system-x86', 'qemu-utils', 'python3', 'openssl', 'fonts-dejavu-core', ...GUEST_NETWORK_PACKAGES, ...VPN_PACKAGES]);
ensureWebBuild();
log('Starting the server');
const child = startServer();
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
