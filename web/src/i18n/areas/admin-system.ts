// The admin console's system screens' texts (`admin_system.*`, locales/admin-system/): every module
// that shows them imports this one, so the screen waits for them (a top-level await).
import { loadArea } from '..';

await loadArea('admin-system');
