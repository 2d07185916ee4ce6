import type { AdminSection } from '../section';

/** System settings, mail, audit log (orders 50–99). */
export const systemSections: AdminSection[] = [];
