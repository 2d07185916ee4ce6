// The administration console's texts (`admin.*`, locales/admin/): every module that shows them
// imports this one, so the screen containing it waits for them (a top-level await).
import { loadArea } from '..';

await loadArea('admin');
