import { and, eq, isNull } from 'drizzle-orm';
import type { TCategoryChoice, TTokenClaims, TTokenType } from '@vdi/contracts';
import type { AppContext } from '../context';
import { schema } from '../db';
import type { ExternalSession } from '../db/schema';
import { ApiError, badRequest, forbidden, unauthorized } from '../http/errors';
import { burnPasswordCheck, findPolicy, findUserById, passwordExpired, verifyPassword } from './passwords';
import type { UserRow } from './sessions';
import { tokenType } from './tokens';

/**
 * `user`: who signed in, when the result is a session (`type` login), and how many earlier sessions
 * of theirs it ended (one session per user), for the audit log.
 */
export type LoginResult = { token: string; type: TTokenType; user?: UserRow; endedSessions?: number };

const LOCAL_PROVIDER = 'local';

/**
 * The steps after the password, in the order of the original service: disclaimer,
 * e-mail verification, password reset; only then a session.
 */
export async function finishLogin(ctx: AppContext, user: UserRow, external?: ExternalSession): Promise<LoginResult> {
  if (!user.active) throw forbidden('user_disabled', 'disabled user');
  const disclaimer = await ctx.settings.get('disclaimer');
  if (disclaimer.enabled && !user.disclaimerAcknowledged) {
    const type = 'disclaimer-acknowledgement-required';
    return { type, token: await ctx.tokens.signSpecial(type, { user_id: user.id }) };
  }
  const [category] = await ctx.db.select().from(schema.categories).where(eq(schema.categories.id, user.categoryId));
  if (category?.emailVerificationRequired && !user.emailVerifiedAt) {
    const type = 'email-verification-required';
    return {
      type,
      token: await ctx.tokens.signSpecial(type, { user_id: user.id, category_id: user.categoryId, current_email: user.email }),
    };
  }
  const policy = await findPolicy(ctx.db, user.categoryId, user.roleId);
  if (user.provider === LOCAL_PROVIDER && (user.passwordResetRequired || passwordExpired(policy, user.passwordLastUpdated))) {
    const type = 'password-reset-required';
    return { type, token: await ctx.tokens.signSpecial(type, { user_id: user.id }) };
  }
  const { token, ended } = await ctx.sessions.start(user, external);
  return { type: 'login', token, user, endedSessions: ended.length };
}

/**
 * Username and password, optionally within one category, from the client address `ip`. The limits
 * are keyed on the address and the normalised name, never on the category: leaving it out gives no
 * second allowance.
 */
export async function passwordLogin(
  ctx: AppContext,
  username: string,
  password: string,
  categoryId: string | undefined,
  ip: string,
  directoryLogin?: SignInHooks['directoryLogin'],
): Promise<LoginResult> {
  let matches: UserRow[] = [];
  let fromDirectory: LoginResult | null = null;
  // A directory that could not be reached: counted as a failure (no unlimited guesses while it is down), answered as it is.
  let unreachable: ApiError | undefined;
  const ok = await ctx.loginThrottle.attempt(ip, username, async () => {
    // A user in the recycle bin is nobody until restored.
    const where = categoryId
      ? and(eq(schema.users.username, username), eq(schema.users.provider, LOCAL_PROVIDER), eq(schema.users.categoryId, categoryId), isNull(schema.users.deletedAt))
      : and(eq(schema.users.username, username), eq(schema.users.provider, LOCAL_PROVIDER), isNull(schema.users.deletedAt));
    const candidates = await ctx.db.select().from(schema.users).where(where);
    if (candidates.length === 0) await burnPasswordCheck(password);
    matches = [];
    for (const c of candidates) if (await verifyPassword(c.passwordHash, password)) matches.push(c);
    if (matches.length > 0 || !directoryLogin) return matches.length > 0;
    // No local account with that password: the directories of the category (same limits, same answer when wrong).
    try {
      fromDirectory = await directoryLogin(username, password, categoryId, ip);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 503) throw err;
      unreachable = err;
      return false;
    }
    return fromDirectory !== null;
  });
  if (!ok) throw unreachable ?? unauthorized('login_failed', 'Invalid username or password');
  if (fromDirectory) return fromDirectory;
  if (matches.length > 1) {
    const cats = await ctx.db.select().from(schema.categories);
    const categories: TCategoryChoice[] = matches.map((m) => {
      const c = cats.find((x) => x.id === m.categoryId);
      return { id: m.categoryId, name: c?.name ?? m.categoryId, photo: c?.photo ?? '' };
    });
    const type = 'category-select';
    return { type, token: await ctx.tokens.signSpecial(type, { username, categories }) };
  }
  return finishLogin(ctx, matches[0]!);
}

/**
 * What the identity module adds to the sign-in (app.ts wires it; this layer does not import modules): the form's
 * directories after local accounts, and the category-select step of a person a provider vouched for.
 */
export type SignInHooks = {
  directoryLogin?(username: string, password: string, categoryId: string | undefined, ip: string): Promise<LoginResult | null>;
  continueExternal?(claims: TTokenClaims, categoryId: string | undefined): Promise<LoginResult>;
  /** Where the browser goes to end the provider's session too (the `redirect` of POST /logout), if anywhere. */
  logoutRedirect?(external: ExternalSession): Promise<string | undefined>;
  /** The kinds GET /authentication/providers lists besides the form. */
  listedKinds?(): Promise<string[]>;
};

/** A Bearer token from an earlier step carries the sign-in on (category chosen, disclaimer accepted, …). */
export async function continueLogin(ctx: AppContext, bearer: string, categoryId: string | undefined, hooks: SignInHooks = {}): Promise<LoginResult> {
  const claims = await ctx.tokens.verify(bearer);
  const type = tokenType(claims);
  switch (type) {
    case 'category-select': {
      if (claims.identity) {
        if (!hooks.continueExternal) throw unauthorized('invalid_token', 'That sign-in is no longer available');
        return hooks.continueExternal(claims, categoryId);
      }
      if (!categoryId || !claims.username || !claims.categories?.some((c) => c.id === categoryId)) {
        throw badRequest('category_not_found', 'Choose one of the offered categories');
      }
      const [user] = await ctx.db
        .select()
        .from(schema.users)
        .where(
          and(
            eq(schema.users.username, claims.username),
            eq(schema.users.categoryId, categoryId),
            eq(schema.users.provider, LOCAL_PROVIDER),
          ),
        );
      if (!user) throw unauthorized('user_not_found', 'User not found');
      return finishLogin(ctx, user);
    }
    case 'disclaimer-acknowledgement-required':
    case 'email-verification-required':
    case 'password-reset-required':
    case 'register': {
      const user = claims.user_id ? await findUserById(ctx.db, claims.user_id) : undefined;
      if (!user) throw unauthorized('user_not_found', 'User not found');
      return finishLogin(ctx, user);
    }
    default:
      throw badRequest('bad_request', `A ${type} token cannot continue a sign-in`);
  }
}
