// Time limits of web unit tests for this machine now (see server/test/helpers/slowdown.ts).
export { scaled } from '../../../scripts/lib/slowdown.mjs';
