import { z } from 'zod';

export const ROLES = ['admin', 'manager', 'advanced', 'user'] as const;
export const ZRole = z.enum(ROLES);
export type TRole = z.infer<typeof ZRole>;

/** Roles that may reach deployments, templates and media. */
export const PRIVILEGED_ROLES: readonly TRole[] = ['admin', 'manager', 'advanced'];
