/**
 * Directories and identity providers as stored (table identity_providers): the console's view (never the secret),
 * the sealed secret opened for the adapters, and the checks every save passes (rules within the provider's
 * category and maximum role).
 */
import { and, eq, isNull, or } from 'drizzle-orm';
import type { TIdentityKind, TIdentityProvider, TIdentityProviderBody, TLoginProvider } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema, type Db } from '../../db';
import { badRequest } from '../../http/errors';
import { openSecret, sealSecret } from '../../auth/secret-box';
import { roleAbove } from './mapping';

export type ProviderRow = typeof schema.identityProviders.$inferSelect;
/** A provider with its secret opened (null: none stored). */
export type LoadedProvider = ProviderRow & { kind: TIdentityKind; secretPlain: string | null };

const p = schema.identityProviders;

/** The public address a provider's people come back to, or null when no public address is configured. */
export function providerUrls(ctx: AppContext, row: Pick<ProviderRow, 'id' | 'kind'>) {
  const base = ctx.config.publicUrl?.replace(/\/$/, '');
  if (!base) return { callback: null, metadata: null };
  if (row.kind === 'oidc') return { callback: `${base}/authentication/oidc/callback/${row.id}`, metadata: null };
  if (row.kind === 'saml') return { callback: `${base}/authentication/saml/acs/${row.id}`, metadata: `${base}/authentication/saml/metadata/${row.id}` };
  return { callback: null, metadata: null };
}

export function providerView(ctx: AppContext, row: ProviderRow): TIdentityProvider {
  const urls = providerUrls(ctx, row);
  return {
    id: row.id,
    kind: row.kind as TIdentityKind,
    name: row.name,
    logo: row.logo,
    category_id: row.categoryId,
    enabled: row.enabled,
    rules: row.rules,
    unmatched: row.unmatched as TIdentityProvider['unmatched'],
    update_on_signin: row.updateOnSignin,
    max_role: row.maxRole as TIdentityProvider['max_role'],
    settings: row.settings,
    secret_set: row.secret !== null,
    callback_url: urls.callback,
    metadata_url: urls.metadata,
    created_at: row.createdAt.toISOString(),
  };
}

export const loginProviderView = (row: ProviderRow): TLoginProvider => ({
  id: row.id,
  kind: row.kind as TIdentityKind,
  name: row.name,
  logo: row.logo,
  category_id: row.categoryId,
});

export function loaded(ctx: AppContext, row: ProviderRow): LoadedProvider {
  return { ...row, kind: row.kind as TIdentityKind, secretPlain: row.secret ? openSecret(ctx.config.secret, row.secret) : null };
}

export async function loadProvider(ctx: AppContext, id: string): Promise<LoadedProvider | undefined> {
  const [row] = await ctx.db.select().from(p).where(eq(p.id, id));
  return row ? loaded(ctx, row) : undefined;
}

/** Enabled providers a sign-in in `categoryId` may use (its own and those for every category), optionally of one kind. */
export async function enabledProviders(ctx: AppContext, opts: { categoryId?: string; kind?: TIdentityKind } = {}): Promise<LoadedProvider[]> {
  const rows = await ctx.db
    .select()
    .from(p)
    .where(
      and(
        eq(p.enabled, true),
        opts.kind ? eq(p.kind, opts.kind) : undefined,
        opts.categoryId ? or(isNull(p.categoryId), eq(p.categoryId, opts.categoryId)) : undefined,
      ),
    )
    .orderBy(p.createdAt, p.id);
  return rows.map((r) => loaded(ctx, r));
}

/** Every rule's group exists, lies in the provider's category when it has one, and its role is within max_role. */
export async function checkRules(db: Db, body: TIdentityProviderBody) {
  for (const [i, rule] of body.rules.entries()) {
    if (roleAbove(rule.role, body.max_role)) {
      throw badRequest('identity_role_not_allowed', `Rule ${i + 1} gives a role above the provider's highest role`, { rule: i + 1 });
    }
    const [group] = await db.select({ categoryId: schema.groups.categoryId }).from(schema.groups).where(eq(schema.groups.id, rule.group_id));
    if (!group || (body.category_id && group.categoryId !== body.category_id)) {
      throw badRequest('identity_group_not_found', `Rule ${i + 1} names a group that is not in the provider's category`, { rule: i + 1 });
    }
  }
  if (body.category_id) {
    const [cat] = await db.select({ id: schema.categories.id }).from(schema.categories).where(eq(schema.categories.id, body.category_id));
    if (!cat) throw badRequest('category_not_found', 'Category not found');
  }
}

/** The columns of a create or update; the secret is sealed, and kept when the body leaves it out. */
export function rowValues(ctx: AppContext, body: TIdentityProviderBody) {
  return {
    kind: body.kind,
    name: body.name,
    logo: body.logo,
    categoryId: body.category_id,
    enabled: body.enabled,
    settings: body.settings as Record<string, unknown>,
    rules: body.rules,
    unmatched: body.unmatched,
    updateOnSignin: body.update_on_signin,
    maxRole: body.max_role,
    ...(body.secret !== undefined ? { secret: body.secret === '' ? null : sealSecret(ctx.config.secret, body.secret) } : {}),
    updatedAt: new Date(),
  };
}
