import { IconArchive, IconFileText, IconHourglass, IconListSearch, IconLock, IconMail, IconSettings } from '@tabler/icons-react';
import type { AdminSection } from '../section';

/**
 * System settings and the audit log (orders 50–99). Labels are core-catalogue keys
 * (`admin_nav.*`), so the console's navigation shows them before a screen is loaded.
 */
export const systemSections: AdminSection[] = [
  { path: 'settings', icon: IconSettings, label: 'admin_nav.settings', group: 'system', order: 50, roles: [], load: () => import('./GeneralSettingsPage') },
  { path: 'settings/disclaimer', icon: IconFileText, label: 'admin_nav.disclaimer', group: 'system', order: 55, roles: [], load: () => import('./DisclaimerPage') },
  { path: 'settings/passwords', icon: IconLock, label: 'admin_nav.passwords', group: 'system', order: 60, roles: [], load: () => import('./PasswordPoliciesPage') },
  { path: 'settings/mail', icon: IconMail, label: 'admin_nav.mail', group: 'system', order: 65, roles: [], load: () => import('./MailPage') },
  { path: 'settings/limits', icon: IconHourglass, label: 'admin_nav.limits', group: 'system', order: 70, roles: [], load: () => import('./LimitsPage') },
  { path: 'backups', icon: IconArchive, label: 'admin_nav.backups', group: 'system', order: 80, roles: [], load: () => import('./BackupsPage') },
  { path: 'audit', icon: IconListSearch, label: 'admin_nav.audit', group: 'system', order: 90, roles: ['manager'], load: () => import('./AuditPage') },
];
