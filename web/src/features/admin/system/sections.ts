import type { AdminSection } from '../sections';

/** System settings, mail, audit log (orders 50–99). */
export const systemSections: AdminSection[] = [];
