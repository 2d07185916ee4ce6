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
