import { IconStack2 } from '@tabler/icons-react';
import AdminApp from '../features/admin/AdminApp';
import type { AdminSection } from '../features/admin/section';

/**
 * The console's sections whose screens belong to other features, wired in here (a feature imports no other
 * feature): the desktop pools' screen, the same one the portal shows at /pools.
 */
const MORE: AdminSection[] = [
  { path: 'desktop_pools', icon: IconStack2, label: 'admin_nav.desktop_pools', group: 'content', order: 48.5, roles: ['manager'], load: () => import('../features/desktop-pools/PoolsPage') },
];

/** /isard-admin/*: the console with every section. */
export default function AdminConsole() {
  return <AdminApp more={MORE} />;
}
