import { IconDeviceDesktop, IconDisc, IconTemplate, IconUsersGroup } from '@tabler/icons-react';
import type { AdminSection } from '../section';

/**
 * Every desktop, template, media and deployment across owners (orders 2–9: support's first stop).
 * Labels are core-catalogue keys (`admin_nav.*`), shown before a screen is loaded. Managers see
 * their category's.
 */
export const desktopSections: AdminSection[] = [
  { path: 'desktops', icon: IconDeviceDesktop, label: 'admin_nav.desktops', order: 2, roles: ['manager'], load: () => import('./DesktopsPage') },
  { path: 'templates', icon: IconTemplate, label: 'admin_nav.templates', order: 3, roles: ['manager'], load: () => import('./TemplatesPage') },
  { path: 'media', icon: IconDisc, label: 'admin_nav.media', order: 4, roles: ['manager'], load: () => import('./MediaPage') },
  { path: 'deployments', icon: IconUsersGroup, label: 'admin_nav.deployments', order: 5, roles: ['manager'], load: () => import('./DeploymentsPage') },
];
