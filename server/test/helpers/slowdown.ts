// Time limits of tests for this machine now: the figure a quiet machine needs times TEST_SLOWDOWN,
// the factor `npm test` (or Vitest's configuration, when started by hand) measured at its start
// (scripts/lib/slowdown.mjs). Bound a wait by its condition first; a limit only as a backstop.
export { scaled, slowdown } from '../../../scripts/lib/slowdown.mjs';
