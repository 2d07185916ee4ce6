import type { TRole } from '@vdi/contracts';

/** Roles that have deployments and may co-own them (spec core §2: /deployments is for admin, manager and advanced). */
export const DEPLOYMENT_ROLES: readonly TRole[] = ['admin', 'manager', 'advanced'];
export const hasDeploymentRole = (role: string) => (DEPLOYMENT_ROLES as readonly string[]).includes(role);
