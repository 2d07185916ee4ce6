// Every server test file: what it starts carries a mark of its own (VDI_TEST_FILE, inherited by
// QEMU, dnsmasq, wireguard-go, xrdp, server processes), and after the file's own clean-up
// (this hook runs last) anything of it still running is ended and the file fails, naming it.
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { sweepLeftovers } from '../../scripts/lib/test-run.mjs';
import { useQuickResolve } from '../src/boot/quick-resolve';

// The packages the test file imports (drizzle-orm's 108 modules) resolved as a server process resolves them.
useQuickResolve();

const file = `${process.env.VDI_TEST_RUN ?? 'by-hand'}:${randomBytes(4).toString('hex')}`;
process.env.VDI_TEST_FILE = file;

afterAll(() => {
  // (a helper of this process in its session, the engine's program helper, ends with it)
  const left = sweepLeftovers({ file, children: 'detached' });
  if (left.length > 0) throw new Error(`left running after this file's tests (now ended): ${left.join('; ')}`);
});
