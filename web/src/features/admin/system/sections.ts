import type { AdminSection } from '../section';

/**
 * System settings and the audit log (orders 50–99). Labels are core-catalogue keys
 * (`admin_nav.*`), so the console's navigation shows them before a screen is loaded.
 */
export const systemSections: AdminSection[] = [
  { path: 'settings', label: 'admin_nav.settings', order: 50, roles: [], load: () => import('./GeneralSettingsPage') },
  { path: 'settings/disclaimer', label: 'admin_nav.disclaimer', order: 55, roles: [], load: () => import('./DisclaimerPage') },
  { path: 'settings/passwords', label: 'admin_nav.passwords', order: 60, roles: [], load: () => import('./PasswordPoliciesPage') },
  { path: 'settings/mail', label: 'admin_nav.mail', order: 65, roles: [], load: () => import('./MailPage') },
  { path: 'settings/limits', label: 'admin_nav.limits', order: 70, roles: [], load: () => import('./LimitsPage') },
  { path: 'audit', label: 'admin_nav.audit', order: 90, roles: ['manager'], load: () => import('./AuditPage') },
];
