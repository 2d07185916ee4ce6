// The content area's texts (`templates.*`, `media.*`, `domain_edit.*`, `storage.*`, `desktop_pools.*`; locales/content/): every module that shows them imports
// this one, so the screen containing it waits for them (a top-level await).
import { loadArea } from '..';

await loadArea('content');
