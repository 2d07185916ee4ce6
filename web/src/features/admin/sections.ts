import type { AdminSection } from './section';
import { peopleSections } from './people/sections';
import { systemSections } from './system/sections';
import { infraSections } from './infra/sections';

export type { AdminSection };

/** Every section of the console, in navigation order. */
export const adminSections: AdminSection[] = [...peopleSections, ...systemSections, ...infraSections].sort((a, b) => a.order - b.order);
