import type { AdminSection } from '../section';

/** Users, groups, categories, registration codes, quotas (orders 10–49). */
export const peopleSections: AdminSection[] = [];
