// Allowed: a module uses an adapter through a type only (no cycle at run time).
import type { Disk } from '../../engine/types';

export const rule = 'r';
export type { Disk };
