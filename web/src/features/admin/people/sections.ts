import { IconApi, IconBuilding, IconFingerprint, IconKey, IconUsers, IconUsersGroup } from '@tabler/icons-react';
import type { AdminSection } from '../section';
// Its labels are admin texts (the console loads them before it shows the navigation).
import '../../../i18n/areas/admin';

/** Users, groups, categories, registration codes, API tokens, sign-in providers (orders 10–44; the desktops' sections follow at 45). */
export const peopleSections: AdminSection[] = [
  { path: 'users', icon: IconUsers, label: 'admin.nav.users', group: 'people', order: 10, roles: ['admin', 'manager'], load: () => import('./UsersPage') },
  { path: 'groups', icon: IconUsersGroup, label: 'admin.nav.groups', group: 'people', order: 20, roles: ['admin', 'manager'], load: () => import('./GroupsPage') },
  { path: 'categories', icon: IconBuilding, label: 'admin.nav.categories', group: 'people', order: 30, roles: ['admin'], load: () => import('./CategoriesPage') },
  { path: 'registration_codes', icon: IconKey, label: 'admin.nav.registration_codes', group: 'people', order: 40, roles: ['admin', 'manager'], load: () => import('./CodesPage') },
  { path: 'api_tokens', icon: IconApi, label: 'admin.nav.api_tokens', group: 'people', order: 42, roles: ['admin', 'manager'], load: () => import('./ApiTokensPage') },
  { path: 'identity_providers', icon: IconFingerprint, label: 'admin.nav.identity_providers', group: 'people', order: 44, roles: ['admin'], load: () => import('./IdentityProvidersPage') },
];
