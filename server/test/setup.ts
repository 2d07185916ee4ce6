// Every server test file: what it starts carries a mark of its own (VDI_TEST_FILE, inherited by
// QEMU, dnsmasq, wireguard-go, xrdp, server processes), and after the file's own clean-up
// (this hook runs last) anything of it still running is ended and the file fails, naming it.
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { sweepLeftovers } from '../../scripts/lib/test-run.mjs';

const file = `${process.env.VDI_TEST_RUN ?? 'by-hand'}:${randomBytes(4).toString('hex')}`;
process.env.VDI_TEST_FILE = file;

afterAll(() => {
  // (a helper of this process in its session, the engine's program helper, ends with it)
  const left = sweepLeftovers({ file, children: 'detached' });
  if (left.length > 0) throw new Error(`left running after this file's tests (now ended): ${left.join('; ')}`);
});
