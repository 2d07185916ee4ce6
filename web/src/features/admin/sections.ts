import type { AdminSection } from './section';
import { peopleSections } from './people/sections';
import { systemSections } from './system/sections';
import { desktopSections } from './desktops/sections';

export type { AdminSection };

/** Every section of the console, in navigation order. */
export const adminSections: AdminSection[] = [...desktopSections, ...peopleSections, ...systemSections].sort((a, b) => a.order - b.order);
