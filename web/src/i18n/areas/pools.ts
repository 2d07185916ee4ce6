// The desktop pools' screens' texts (`pools_admin.*`, locales/pools/): every module that shows them imports
// this one, so the screen containing it waits for them (a top-level await).
import { loadArea } from '..';

await loadArea('pools');
