import type { ComponentType } from 'react';
import type { TRole } from '@vdi/contracts';

/** The console's groups of sections, in the navigation's order (a section with none stands above them: the dashboard). */
export const ADMIN_GROUPS = ['people', 'content', 'infrastructure', 'bookings', 'system'] as const;
export type AdminGroup = (typeof ADMIN_GROUPS)[number];

/**
 * A screen of the administration console (/isard-admin/<path>): its entry in the console's
 * navigation, who may open it (admins always; managers where listed) and the lazily loaded screen.
 */
export type AdminSection = {
  /** Relative to /isard-admin, e.g. `users`, `settings/mail`. */
  path: string;
  /** i18n key of the navigation label and page title. */
  label: string;
  /** Order in the navigation. */
  order: number;
  /** Its group in the navigation (none: above the groups). */
  group?: AdminGroup;
  roles: readonly Extract<TRole, 'admin' | 'manager'>[];
  /** Its icon in the navigation. */
  icon: ComponentType<{ size?: number; stroke?: number }>;
  load: () => Promise<{ default: ComponentType }>;
  /** Pages below the section, routed but not in the navigation (e.g. `:id`, one object's page at `<path>/:id`). */
  pages?: readonly { path: string; load: () => Promise<{ default: ComponentType }> }[];
};
