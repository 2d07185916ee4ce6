#!/usr/bin/env node
// `npm run bench`: timings of the portal beside the raw tools measured in the same run. Never a test.
import { join } from 'node:path';
import { ensureDebianPackages, ensureNpmPackages, root, run } from './lib/setup.mjs';

ensureNpmPackages();
ensureDebianPackages(['qemu-system-x86', 'qemu-utils']);
run(process.execPath, ['--import', 'tsx', join(root, 'server', 'bench', 'desktops.bench.ts')], { env: { ...process.env, LOG_LEVEL: 'silent' } });
