import type { AdminSection } from './section';
import { peopleSections } from './people/sections';
import { systemSections } from './system/sections';
import { infraSections } from './infra/sections';
import { reserveSections } from './reserve/sections';
import { desktopSections } from './desktops/sections';

export type { AdminSection };

/** Every section of the console, in navigation order. */
export const adminSections: AdminSection[] = [...desktopSections, ...peopleSections, ...systemSections, ...infraSections, ...reserveSections].sort((a, b) => a.order - b.order);
