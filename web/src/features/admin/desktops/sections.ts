import { IconDeviceDesktop, IconDisc, IconTemplate, IconUsersGroup } from '@tabler/icons-react';
import type { AdminSection } from '../section';

/**
 * Every desktop, template, media and deployment across owners (orders 45–49, after the people and before the system settings).
 * Labels are core-catalogue keys (`admin_nav.*`), shown before a screen is loaded. Managers see
 * their category's.
 */
export const desktopSections: AdminSection[] = [
  { path: 'desktops', icon: IconDeviceDesktop, label: 'admin_nav.desktops', group: 'content', order: 45, roles: ['manager'], load: () => import('./DesktopsPage'), pages: [{ path: ':id', load: () => import('./DesktopPage') }] },
  { path: 'templates', icon: IconTemplate, label: 'admin_nav.templates', group: 'content', order: 46, roles: ['manager'], load: () => import('./TemplatesPage') },
  { path: 'media', icon: IconDisc, label: 'admin_nav.media', group: 'content', order: 47, roles: ['manager'], load: () => import('./MediaPage') },
  { path: 'deployments', icon: IconUsersGroup, label: 'admin_nav.deployments', group: 'content', order: 48, roles: ['manager'], load: () => import('./DeploymentsPage') },
];
