/**
 * A person a directory or identity provider vouched for, signed in here: found by (kind, uid) — or made from the
 * first matching mapping rule, or sent to the registration-code step, or refused — then through the same steps
 * as a local sign-in (finishLogin). `planSignIn` decides without writing (the console's "test" shows it).
 */
import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import type { TCategoryChoice, TIdentityPreview, TRole, TTokenClaims } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { ExternalSession } from '../../db/schema';
import { audit } from '../../audit/record';
import { forbidden, precondition, unauthorized } from '../../http/errors';
import { finishLogin, type LoginResult } from '../../auth/login-flow';
import type { UserRow } from '../../auth/sessions';
import { TOKEN_LIFETIME } from '../../auth/tokens';
import { userLimitProblem } from '../quotas/users';
import { matchingRule, roleAbove, valuesOf, type ExternalIdentity } from './mapping';
import { loadProvider, type LoadedProvider } from './providers';

const u = schema.users;

type Refusal = 'identity_not_allowed' | 'identity_role_not_allowed' | 'identity_group_not_found' | 'user_disabled';
export type Plan =
  | { outcome: 'existing' | 'update'; user: UserRow; groupId: string; role: TRole; rule: number | null }
  | { outcome: 'create'; categoryId: string; groupId: string; role: TRole; rule: number }
  | { outcome: 'register'; categoryId: string | null; rule: null }
  | { outcome: 'choose'; users: UserRow[]; rule: number | null }
  | { outcome: 'refused'; reason: Refusal; rule: number | null; user?: UserRow };

/** Where a matched rule leads: its group (and so category) and role, or why not. */
async function ruleTarget(ctx: AppContext, provider: LoadedProvider, index: number): Promise<{ reason: Refusal } | { groupId: string; categoryId: string; role: TRole }> {
  const rule = provider.rules[index]!;
  if (roleAbove(rule.role, provider.maxRole)) return { reason: 'identity_role_not_allowed' };
  const [group] = await ctx.db.select({ id: schema.groups.id, categoryId: schema.groups.categoryId }).from(schema.groups).where(eq(schema.groups.id, rule.group_id));
  if (!group || (provider.categoryId && group.categoryId !== provider.categoryId)) return { reason: 'identity_group_not_found' };
  return { groupId: group.id, categoryId: group.categoryId, role: rule.role };
}

/** What signing `identity` in through `provider` would do (within `categoryId` when the sign-in page chose one). */
export async function planSignIn(ctx: AppContext, provider: LoadedProvider, identity: ExternalIdentity, categoryId?: string): Promise<Plan> {
  const within = provider.categoryId ?? categoryId;
  const accounts = await ctx.db
    .select()
    .from(u)
    .where(and(eq(u.provider, provider.kind), eq(u.uid, identity.uid), within ? eq(u.categoryId, within) : undefined));
  const rule = matchingRule(provider.rules, identity);
  if (accounts.length > 1) return { outcome: 'choose', users: accounts, rule };
  const user = accounts[0];
  if (user) {
    // A person disabled (or deleted) here stays refused, whatever the directory says.
    if (!user.active || user.deletedAt) return { outcome: 'refused', reason: 'user_disabled', rule, user };
    if (provider.updateOnSignin && rule !== null) {
      const target = await ruleTarget(ctx, provider, rule);
      if ('reason' in target) return { outcome: 'refused', reason: target.reason, rule, user };
      // A rule's group in another category moves nobody between categories: the role still follows.
      const groupId = target.categoryId === user.categoryId ? target.groupId : user.groupId;
      const changed = groupId !== user.groupId || target.role !== user.roleId;
      return { outcome: changed ? 'update' : 'existing', user, groupId, role: target.role, rule };
    }
    return { outcome: 'existing', user, groupId: user.groupId, role: user.roleId as TRole, rule };
  }
  if (rule !== null) {
    const target = await ruleTarget(ctx, provider, rule);
    if ('reason' in target) return { outcome: 'refused', reason: target.reason, rule };
    return { outcome: 'create', categoryId: target.categoryId, groupId: target.groupId, role: target.role, rule };
  }
  if (provider.unmatched === 'register') return { outcome: 'register', categoryId: within ?? null, rule: null };
  return { outcome: 'refused', reason: 'identity_not_allowed', rule: null };
}

/** The console's preview of a plan. */
export function previewOf(identity: ExternalIdentity, plan: Plan): TIdentityPreview {
  const shown = { uid: identity.uid, username: identity.username, name: identity.name, email: identity.email, photo: identity.photo, groups: identity.groups };
  const base = { identity: shown, rule: plan.rule, reason: null, category_id: null, group_id: null, role: null };
  switch (plan.outcome) {
    case 'existing':
    case 'update':
      return { ...base, outcome: plan.outcome, category_id: plan.user.categoryId, group_id: plan.groupId, role: plan.role };
    case 'create':
      return { ...base, outcome: 'create', category_id: plan.categoryId, group_id: plan.groupId, role: plan.role };
    case 'register':
      return { ...base, outcome: 'register', category_id: plan.categoryId };
    case 'choose':
      return { ...base, outcome: 'existing' };
    case 'refused':
      return { ...base, outcome: plan.reason === 'user_disabled' ? 'disabled' : 'refused', reason: plan.reason, category_id: plan.user?.categoryId ?? null };
  }
}

const REFUSAL_TEXT: Record<Refusal, string> = {
  identity_not_allowed: 'Your account is not allowed to sign in here',
  identity_role_not_allowed: 'Your account maps to a role this sign-in may not give',
  identity_group_not_found: 'Your account maps to a group that does not exist',
  user_disabled: 'disabled user',
};

const claimsOf = (provider: LoadedProvider, identity: ExternalIdentity): NonNullable<TTokenClaims['identity']> => ({
  provider_id: provider.id,
  uid: identity.uid,
  username: identity.username,
  name: identity.name,
  email: identity.email,
  photo: identity.photo,
  groups: identity.groups,
  attributes: Object.fromEntries(provider.rules.map((r) => r.attribute).filter((a) => a.toLowerCase() !== 'groups').map((a) => [a, valuesOf(identity, a)])),
});

async function categoryChoices(ctx: AppContext, ids?: string[]): Promise<TCategoryChoice[]> {
  const cats = await ctx.db.select().from(schema.categories).where(ids ? inArray(schema.categories.id, ids) : undefined).orderBy(schema.categories.name);
  return cats.map((c) => ({ id: c.id, name: c.name, photo: c.photo }));
}

/**
 * Signs `identity` in through `provider`: a session (or the next step's token), the category-select step when
 * several accounts or no category, the register step, or a 403 with the refusal's code. `external`: what the
 * provider's logout will need of the session.
 */
export async function signInExternal(
  ctx: AppContext,
  provider: LoadedProvider,
  identity: ExternalIdentity,
  opts: { categoryId?: string; external?: ExternalSession; ip?: string } = {},
): Promise<LoginResult> {
  const plan = await planSignIn(ctx, provider, identity, opts.categoryId);
  const actor = (user: { id: string; username: string; roleId: string; categoryId: string }) => ({
    id: user.id, name: user.username, role: user.roleId, categoryId: user.categoryId, address: opts.ip ?? '',
  });
  switch (plan.outcome) {
    case 'refused':
      await audit(ctx.db, { id: plan.user?.id ?? null, name: identity.username.slice(0, 128), role: null, categoryId: plan.user?.categoryId ?? provider.categoryId, address: opts.ip ?? '' }, {
        action: 'auth.sign_in_failed', objectType: 'user', objectName: identity.username.slice(0, 128), detail: { reason: plan.reason, provider: provider.name },
      });
      throw forbidden(plan.reason, REFUSAL_TEXT[plan.reason]);
    case 'choose':
      return {
        type: 'category-select',
        token: await ctx.tokens.signSpecial('category-select', { categories: await categoryChoices(ctx, plan.users.map((x) => x.categoryId)), identity: claimsOf(provider, identity) }),
      };
    case 'register': {
      if (!plan.categoryId) {
        return { type: 'category-select', token: await ctx.tokens.signSpecial('category-select', { categories: await categoryChoices(ctx), identity: claimsOf(provider, identity) }) };
      }
      const id = randomUUID();
      await ctx.db.insert(schema.pendingRegistrations).values({
        id, provider: provider.kind, categoryId: plan.categoryId, username: identity.username, name: identity.name || identity.username,
        email: identity.email, passwordHash: null, uid: identity.uid, photo: identity.photo, identityProviderId: provider.id,
        expiresAt: new Date(Date.now() + TOKEN_LIFETIME.register * 1000),
      });
      const token = await ctx.tokens.signSpecial('register', {
        provider: provider.kind, user_id: id, username: identity.username, category_id: plan.categoryId, name: identity.name, email: identity.email, photo: identity.photo,
      });
      return { type: 'register', token };
    }
    case 'create': {
      const limit = await userLimitProblem(ctx.db, plan.groupId, plan.categoryId);
      if (limit) throw precondition(limit.code, 'User limit reached', limit.params);
      const [user] = await ctx.db
        .insert(u)
        .values({
          id: randomUUID(), uid: identity.uid, username: identity.username, provider: provider.kind, categoryId: plan.categoryId, groupId: plan.groupId,
          roleId: plan.role, name: identity.name || identity.username, email: identity.email, emailVerifiedAt: identity.email ? new Date() : null,
          photo: identity.photo, identityProviderId: provider.id,
        })
        .returning();
      await audit(ctx.db, actor(user!), {
        action: 'user.create', objectType: 'user', objectId: user!.id, objectName: user!.username, categoryId: user!.categoryId,
        detail: { provider: provider.name, kind: provider.kind, rule: plan.rule + 1, role: plan.role, group: plan.groupId },
      });
      return finishLogin(ctx, user!, opts.external);
    }
    case 'existing':
    case 'update': {
      const changes: Partial<UserRow> = {};
      if (identity.name && identity.name !== plan.user.name) changes.name = identity.name;
      if (identity.email && identity.email !== plan.user.email) changes.email = identity.email;
      if (identity.photo && identity.photo !== plan.user.photo) changes.photo = identity.photo;
      if (plan.outcome === 'update') Object.assign(changes, { groupId: plan.groupId, roleId: plan.role });
      let user = plan.user;
      if (Object.keys(changes).length > 0) {
        [user] = (await ctx.db.update(u).set(changes).where(eq(u.id, user.id)).returning()) as [UserRow];
        if (plan.outcome === 'update') {
          await audit(ctx.db, actor(user), {
            action: 'user.update', objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId,
            detail: { provider: provider.name, rule: (plan.rule ?? 0) + 1, role: plan.role, group: plan.groupId },
          });
        }
      }
      return finishLogin(ctx, user, opts.external);
    }
  }
}

/** The category-select step of a person from a provider: the chosen category carries the sign-in on. */
export async function continueExternal(ctx: AppContext, claims: TTokenClaims, categoryId: string | undefined): Promise<LoginResult> {
  const id = claims.identity!;
  if (!categoryId || !claims.categories?.some((c) => c.id === categoryId)) throw forbidden('category_not_found', 'Choose one of the offered categories');
  const provider = await loadProvider(ctx, id.provider_id);
  if (!provider?.enabled) throw unauthorized('identity_provider_not_found', 'That sign-in is no longer available');
  return signInExternal(ctx, provider, { ...id, attributes: id.attributes ?? {} }, { categoryId });
}
