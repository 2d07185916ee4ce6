import { z } from 'zod';
import { ZAdminListQuery, adminList } from './admin-people';
import { ZRole } from './roles';

/**
 * Personal API tokens: `Authorization: Bearer vdi_<id>_<secret>` on /api/v3, acting as their owner at each call.
 * `read` tokens may only read (GET/HEAD); `full` ones do whatever their owner may.
 */
export const API_TOKEN_PREFIX = 'vdi_';
export const API_TOKEN_SCOPES = ['read', 'full'] as const;
export const ZApiTokenScope = z.enum(API_TOKEN_SCOPES);
export type TApiTokenScope = z.infer<typeof ZApiTokenScope>;
/** The longest life a token may be given (and the life of one created without an expiry is unlimited). */
export const API_TOKEN_MAX_DAYS = 366;
/** Live (not revoked) tokens one person may hold. */
export const API_TOKEN_MAX_PER_USER = 25;

export const ZApiTokenCreate = z
  .object({
    name: z.string().trim().min(1).max(64),
    scope: ZApiTokenScope,
    /** When it stops working (ISO date-time, within API_TOKEN_MAX_DAYS), or null: until revoked. */
    expires: z.iso.datetime({ offset: true }).nullable(),
  })
  .strict();
export type TApiTokenCreate = z.infer<typeof ZApiTokenCreate>;

export const ZApiToken = z.object({
  id: z.string(),
  name: z.string(),
  /** What identifies it once its secret is gone: `vdi_<id>`. */
  prefix: z.string(),
  scope: ZApiTokenScope,
  created: z.string(),
  expires: z.string().nullable(),
  last_used: z.string().nullable(),
  revoked: z.string().nullable(),
});
export type TApiToken = z.infer<typeof ZApiToken>;
export const ZApiTokenList = z.array(ZApiToken);
/** The answer of a creation: the only time the secret is shown. */
export const ZApiTokenCreated = ZApiToken.extend({ token: z.string() });
export type TApiTokenCreated = z.infer<typeof ZApiTokenCreated>;

// ------------------------------------------------------------------ the console's list
export const API_TOKEN_STATES = ['active', 'expired', 'revoked'] as const;
export const ZAdminApiTokensQuery = ZAdminListQuery.extend({
  sort: z.enum(['name', 'user', 'created', 'expires', 'last_used']).optional(),
  category: z.string().min(1).max(64).optional(),
  scope: ZApiTokenScope.optional(),
  state: z.enum(API_TOKEN_STATES).optional(),
});
export type TAdminApiTokensQuery = z.input<typeof ZAdminApiTokensQuery>;
export const ZAdminApiToken = ZApiToken.extend({
  user_id: z.string(),
  username: z.string(),
  user_name: z.string(),
  role: ZRole,
  category: z.string(),
  category_name: z.string(),
});
export type TAdminApiToken = z.infer<typeof ZAdminApiToken>;
export const ZAdminApiTokenList = adminList(ZAdminApiToken);
export type TAdminApiTokenList = z.infer<typeof ZAdminApiTokenList>;
