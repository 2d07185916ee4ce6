// The admin console's infrastructure screens' texts (`admin_infra.*`, locales/admin-infra/): every
// module that shows them imports this one, so the screen waits for them (a top-level await).
import { loadArea } from '..';

await loadArea('admin-infra');
