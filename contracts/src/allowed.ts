import { z } from 'zod';

/**
 * Sharing criteria of templates, media and deployments (reference §2.7): for each key, false = the
 * criterion is unused, [] = everyone, a list = those ids. A key left out is unused (false), as the
 * original system defaults them: clients send only the criteria they use.
 */
export const ZAllowedIds = z.union([z.array(z.string().min(1).max(64)).max(5000), z.literal(false)]);
export const ZAllowed = z.object({
  roles: ZAllowedIds.default(false),
  categories: ZAllowedIds.default(false),
  groups: ZAllowedIds.default(false),
  users: ZAllowedIds.default(false),
});
export type TAllowed = z.infer<typeof ZAllowed>;
export type TAllowedInput = z.input<typeof ZAllowed>;
export const NOT_SHARED: TAllowed = { roles: false, categories: false, groups: false, users: false };

/** Searches of the permission pickers start at this many typed letters (spec core §9). */
export const ALLOWED_TERM_MIN = 2;

/**
 * POST /admin/allowed/term/{table} (core §7; reference: the original's alloweds view): the roles,
 * categories, groups or users whose name (users: also their username) holds the typed term, among
 * those the caller may pick. `category` narrows to one category (admins pick in any).
 */
export const ZAllowedTermTable = z.enum(['roles', 'categories', 'groups', 'users']);
export type TAllowedTermTable = z.infer<typeof ZAllowedTermTable>;
export const ZAllowedTermQuery = z.object({
  term: z.string().trim().min(ALLOWED_TERM_MIN).max(50),
  category: z.string().min(1).max(64).optional(),
});
/** A role or a category. */
export const ZAllowedTermNamed = z.object({ id: z.string(), name: z.string() });
/** A group, with its category (`parent_category` as the original names it). */
export const ZAllowedTermGroup = ZAllowedTermNamed.extend({ parent_category: z.string(), category_name: z.string() });
/** A user: `uid` is the username; `category` its category id. */
export const ZAllowedTermUser = ZAllowedTermNamed.extend({ uid: z.string(), category: z.string(), category_name: z.string(), group_name: z.string() });
export const ZAllowedTermItem = z.union([ZAllowedTermUser, ZAllowedTermGroup, ZAllowedTermNamed]);
export type TAllowedTermItem = z.infer<typeof ZAllowedTermItem>;
export type TAllowedTermUser = z.infer<typeof ZAllowedTermUser>;
export type TAllowedTermGroup = z.infer<typeof ZAllowedTermGroup>;

/**
 * POST /admin/allowed/update/{table}: whom an item is shared with — a template (`domains`, as the
 * original names its table) or a media. The answer is `{}`.
 */
export const ZAllowedUpdateTable = z.enum(['domains', 'media']);
export type TAllowedUpdateTable = z.infer<typeof ZAllowedUpdateTable>;
export const ZAllowedUpdate = z.object({ id: z.string().min(1).max(64), allowed: ZAllowed });
export type TAllowedUpdate = z.input<typeof ZAllowedUpdate>;
