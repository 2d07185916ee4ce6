import { IconChartBar, IconCpu, IconDatabase, IconGauge, IconLoader } from '@tabler/icons-react';
import type { AdminSection } from '../section';
// Its labels are this area's texts (the console loads them before it shows the navigation).
import '../../../i18n/areas/admin-infra';

/** The dashboard (first screen, order 1), the usage reports (order 2) and the infrastructure: storage, jobs, hypervisors (orders 110–130). */
export const infraSections: AdminSection[] = [
  { path: 'dashboard', icon: IconGauge, label: 'admin_infra.nav.dashboard', order: 1, roles: ['admin', 'manager'], load: () => import('./DashboardPage') },
  { path: 'reports', icon: IconChartBar, label: 'admin_infra.nav.reports', order: 2, roles: ['admin', 'manager'], load: () => import('./ReportsPage') },
  { path: 'storage', icon: IconDatabase, label: 'admin_infra.nav.storage', group: 'infrastructure', order: 110, roles: ['admin', 'manager'], load: () => import('./StoragePage') },
  { path: 'jobs', icon: IconLoader, label: 'admin_infra.nav.jobs', group: 'infrastructure', order: 120, roles: ['admin', 'manager'], load: () => import('./JobsPage') },
  { path: 'hypervisors', icon: IconCpu, label: 'admin_infra.nav.hypervisors', group: 'infrastructure', order: 130, roles: [], load: () => import('./HypervisorsPage') },
];
