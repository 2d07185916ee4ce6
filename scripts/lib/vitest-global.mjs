// Vitest's global set-up. Started by hand (not by `npm test`, which does this itself after all its
// runners), it ends and names what the run left running, and then fails the run.
import { endTestRun, ownsTestRun, sweepLeftovers } from './test-run.mjs';

export default function setup() {
  return () => {
    if (!ownsTestRun()) return;
    // (its own workers, its children, may still be ending)
    const left = sweepLeftovers({ children: false });
    endTestRun();
    if (left.length > 0) throw new Error(`left running after the tests (now ended):\n  ${left.join('\n  ')}`);
  };
}
