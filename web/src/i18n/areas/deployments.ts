// The deployments area's texts (`deployments.*`, locales/deployments/): every module that shows
// them imports this one, so the screen containing it waits for them (a top-level await).
import { loadArea } from '..';

await loadArea('deployments');
