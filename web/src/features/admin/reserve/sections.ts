import { IconCalendarCog, IconClockPause, IconCpu } from '@tabler/icons-react';
import type { AdminSection } from '../section';
// Its labels are admin_reserve texts (the console loads them before it shows the navigation).
import '../../../i18n/areas/admin-reserve';

/**
 * GPU cards and profiles, booking rules (admins only, as the planner) and auto-shutdown policies
 * (managers too, for their category) — orders 100–119.
 */
export const reserveSections: AdminSection[] = [
  { path: 'reservables', icon: IconCpu, label: 'admin_reserve.nav.reservables', group: 'bookings', order: 100, roles: [], load: () => import('./ReservablesPage') },
  { path: 'booking_rules', icon: IconCalendarCog, label: 'admin_reserve.nav.booking_rules', group: 'bookings', order: 105, roles: [], load: () => import('./BookingRulesPage') },
  { path: 'shutdown_policies', icon: IconClockPause, label: 'admin_reserve.nav.shutdown_policies', group: 'bookings', order: 110, roles: ['manager'], load: () => import('./ShutdownPoliciesPage') },
];
