import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, eq, isNull } from 'drizzle-orm';
import { ZAdminLoginAnswer } from '@vdi/contracts';
import type { AppContext } from '../context';
import { schema } from '../db';
import { ApiError } from '../http/errors';
import { requireAuth, sessionOf } from '../http/guard';
import type { UserRow } from './sessions';

/**
 * The admin app's session (`/isard-admin`), opened from a portal session as the original's webapp
 * did: the portal signs the admin or manager in with `POST /isard-admin/login` (Bearer), which sets
 * the `session` cookie, and signs out with `GET /isard-admin/logout/remote`. The cookie holds the
 * portal session's id and a random secret whose hash the session row keeps, so the admin session
 * ends with the portal session (sign-out, expiry, revocation) or with the remote sign-out.
 */
export const ADMIN_SESSION_COOKIE = 'session';
const ADMIN_ROLES = ['admin', 'manager'] as const;
/** `<session id>.<secret>`: checked before any lookup, so that no client input reaches a query unshaped. */
const COOKIE_SHAPE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

const hashOf = (secret: string) => createHash('sha256').update(secret).digest();

function parseCookie(value: string | undefined) {
  const m = value ? COOKIE_SHAPE.exec(value) : null;
  return m ? { sessionId: m[1]!, secret: m[2]! } : null;
}

/** The admin or manager behind an admin-session cookie, or null when it is not (or no longer) valid. */
export async function adminSessionUser(ctx: AppContext, cookie: string | undefined): Promise<UserRow | null> {
  const parsed = parseCookie(cookie);
  if (!parsed) return null;
  const [row] = await ctx.db
    .select({ session: schema.sessions, user: schema.users })
    .from(schema.sessions)
    .innerJoin(schema.users, eq(schema.users.id, schema.sessions.userId))
    .where(and(eq(schema.sessions.id, parsed.sessionId), isNull(schema.sessions.revokedAt)));
  if (!row?.session.adminSecretHash || row.session.maxTimeAt.getTime() <= Date.now()) return null;
  const expected = Buffer.from(row.session.adminSecretHash, 'base64url');
  const given = hashOf(parsed.secret);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  if (!row.user.active || !(ADMIN_ROLES as readonly string[]).includes(row.user.roleId)) return null;
  return row.user;
}

const cookieOptions = (request: FastifyRequest) =>
  ({ path: '/', httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https' }) as const;

/** Mounted under /isard-admin. */
export async function adminSessionRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const adminsAndManagers = requireAuth(ctx, { roles: ADMIN_ROLES, sessionOnly: true });

  // The original answers those without a (live) session with a redirect to the sign-in page.
  const login = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      await adminsAndManagers(request, reply);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return reply.redirect('/login', 302);
      throw err;
    }
    const session = sessionOf(request);
    const secret = randomBytes(32).toString('base64url');
    await ctx.db
      .update(schema.sessions)
      .set({ adminSecretHash: hashOf(secret).toString('base64url') })
      .where(eq(schema.sessions.id, session.id));
    return reply.setCookie(ADMIN_SESSION_COOKIE, `${session.id}.${secret}`, cookieOptions(request)).send({ success: true });
  };
  // The Vue 3 sign-in posts; the older portal (and the admin app's impersonation) get.
  const loginSchema = { schema: { response: { 200: ZAdminLoginAnswer } } };
  r.post('/login', loginSchema, login);
  r.get('/login', loginSchema, login);

  // Always answers success: ends the admin session of the cookie, if any, and clears the cookie.
  r.get('/logout/remote', { schema: { response: { 200: ZAdminLoginAnswer } } }, async (request, reply) => {
    const parsed = parseCookie(request.cookies[ADMIN_SESSION_COOKIE]);
    if (parsed && (await adminSessionUser(ctx, request.cookies[ADMIN_SESSION_COOKIE]))) {
      await ctx.db.update(schema.sessions).set({ adminSecretHash: null }).where(eq(schema.sessions.id, parsed.sessionId));
    }
    return reply.clearCookie(ADMIN_SESSION_COOKIE, cookieOptions(request)).send({ success: true });
  });
}
