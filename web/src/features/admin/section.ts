import type { ComponentType } from 'react';
import type { TRole } from '@vdi/contracts';

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
  roles: readonly Extract<TRole, 'admin' | 'manager'>[];
  /** Its icon in the navigation. */
  icon: ComponentType<{ size?: number; stroke?: number }>;
  load: () => Promise<{ default: ComponentType }>;
};
