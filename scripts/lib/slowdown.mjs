// How slow this machine is right now, as one factor the tests multiply their time limits by
// (TEST_SLOWDOWN). `npm test` measures it once at its start and every runner inherits it; a
// runner started by hand measures it in its configuration (vitest.config.ts). Plain Node.
import { accessSync, constants, existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

/** CPU milliseconds one probe round takes on the project's reference machine (2 cores, quiet). */
const REFERENCE_ROUND_MS = 25;
const ROUND = 1e7;
const ROUNDS = 7;
/** Beyond this a machine is too busy to say anything more useful; bounds stay finite. */
export const MAX_SLOWDOWN = 12;
/**
 * How much longer the test guests' work takes when QEMU emulates their CPU (TCG) than under KVM, which the
 * bounds were set on: their boots, a session's start in xrdp, a clipboard's round trip. The bench rows and the
 * class journeys took about three times as long on this project's machines without /dev/kvm (decision 0036).
 */
export const EMULATED_GUESTS_SLOWDOWN = 3;

/**
 * Whether the test guests' CPU is emulated here: QEMU's accelerator as the server's `ACCEL=auto` decides it
 * (server/src/engine/accel.ts, which this must agree with: runner.test.ts checks it). Plain Node, for the runner.
 */
export function guestsEmulated() {
  if (!existsSync('/dev/kvm')) return true;
  try {
    accessSync('/dev/kvm', constants.R_OK | constants.W_OK);
  } catch {
    return true;
  }
  return existsSync('/sys/module/kvm_pvm');
}

function work(n) {
  let x = 0x2545f491;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  return x;
}

/**
 * Times a fixed CPU-bound round several times against the reference figure (slower CPU and
 * contention for the cores both show), and takes the run queue (1-minute load average per core)
 * into account: a short probe can be lucky on a busy machine. Times EMULATED_GUESTS_SLOWDOWN when the
 * guests' CPU is emulated (no usable KVM): a quiet CI machine without it measured 1, and a guest wait
 * set on KVM ran out there (an xrdp session not drawn within 60 s). At least 1, at most MAX_SLOWDOWN, to one decimal.
 */
export function measureSlowdown() {
  work(1e5); // compiled before it is timed
  const ratios = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    work(ROUND);
    ratios.push((performance.now() - t0) / REFERENCE_ROUND_MS);
  }
  ratios.sort((a, b) => a - b);
  const probe = ratios[Math.floor(ratios.length / 2)];
  const cores = availableParallelism();
  const load = loadavg()[0] / cores;
  const emulated = guestsEmulated();
  const factor = Math.min(MAX_SLOWDOWN, Math.round(Math.max(1, probe, load) * (emulated ? EMULATED_GUESTS_SLOWDOWN : 1) * 10) / 10);
  return { factor, probe: Math.round(probe * 10) / 10, load: Math.round(load * 10) / 10, cores, emulated };
}

export const describeSlowdown = (m) =>
  `TEST_SLOWDOWN=${m.factor} (probe ${m.probe}× the reference, load ${m.load} per core on ${m.cores} cores${m.emulated ? `, guests emulated: no usable KVM, ×${EMULATED_GUESTS_SLOWDOWN}` : ''})`;

/** TEST_SLOWDOWN from the environment, or measured now and put there (children inherit it). */
export function testSlowdown() {
  const given = Number(process.env.TEST_SLOWDOWN);
  if (given >= 1) return given;
  const m = measureSlowdown();
  process.env.TEST_SLOWDOWN = String(m.factor);
  process.stdout.write(`${describeSlowdown(m)}\n`);
  return m.factor;
}

/** A time limit of a test (ms) for this machine now: the quiet machine's figure times TEST_SLOWDOWN. */
export const scaled = (ms) => Math.round(ms * slowdown());

/** The factor itself (1 when not measured). */
export const slowdown = () => (Number(process.env.TEST_SLOWDOWN) >= 1 ? Number(process.env.TEST_SLOWDOWN) : 1);
