// The console's desktops, templates, media and deployments screens' texts (`admin_desktops.*`,
// locales/admin-desktops/): every module that shows them imports this one (a top-level await).
import { loadArea } from '..';

await loadArea('admin-desktops');
