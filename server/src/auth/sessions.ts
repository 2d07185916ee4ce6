import { randomUUID } from 'node:crypto';
import { and, eq, isNull, ne } from 'drizzle-orm';
import type { TRole, TSessionData, TTokenClaims } from '@vdi/contracts';
import type { Config } from '../config';
import { schema, type Db } from '../db';
import type { ExternalSession } from '../db/schema';
import { unauthorized } from '../http/errors';
import { tokenType, type TokenService } from './tokens';

export type UserRow = typeof schema.users.$inferSelect;
export type SessionRow = typeof schema.sessions.$inferSelect;

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export const sessionData = (user: UserRow): TSessionData => ({
  provider: user.provider,
  user_id: user.id,
  role_id: user.roleId as TRole,
  category_id: user.categoryId,
  group_id: user.groupId,
  name: user.name,
});

/** The session id a login token names, or 401 for any other token. */
export function sessionIdOf(claims: TTokenClaims): string {
  if (tokenType(claims) !== 'login' || !claims.session_id) throw unauthorized('invalid_token', 'Not a session token');
  return claims.session_id;
}

/** The session when it is still alive (not revoked, within its absolute limit), or 401. */
export function liveSession(session: SessionRow | null | undefined): SessionRow {
  if (!session || session.revokedAt || session.maxTimeAt.getTime() <= Date.now()) {
    throw unauthorized('session_expired', 'Session expired');
  }
  return session;
}

/**
 * Sessions: token life (5 min), renewal window from the last renewal (30 min) and an
 * absolute limit from sign-in (8 h). One active session per user.
 */
export function createSessionService(db: Db, tokens: TokenService, configured: Config['session']) {
  /** The configured lifetimes, each replaced by the admin's `sessions` setting when it sets one (`applySetting`). */
  let limits = { ...configured };
  /** Told of every ended session, so that live sockets of it are closed at once. */
  const endedListeners = new Set<(sessionIds: string[]) => void>();
  const ended = (ids: string[]) => {
    if (ids.length > 0) for (const l of endedListeners) l(ids);
  };

  async function issueToken(user: UserRow, session: SessionRow, issuedAt: number) {
    return tokens.sign({ sub: user.id, session_id: session.id, data: sessionData(user) }, seconds(session.expiresAt), issuedAt);
  }

  return {
    /** A new session for a user who passed every sign-in step; earlier sessions end (`ended`: their ids). */
    async start(user: UserRow, external?: ExternalSession): Promise<{ token: string; ended: string[] }> {
      // Whole seconds, so that the token's exp minus iat is exactly the token life.
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      const maxTimeAt = new Date(now.getTime() + limits.maxSeconds * 1000);
      const expiresAt = new Date(Math.min(now.getTime() + limits.tokenSeconds * 1000, maxTimeAt.getTime()));
      const id = randomUUID();
      let previous: { id: string }[] = [];
      const session = await db.transaction(async (tx) => {
        previous = await tx
          .update(schema.sessions)
          .set({ revokedAt: now })
          .where(and(eq(schema.sessions.userId, user.id), isNull(schema.sessions.revokedAt)))
          .returning({ id: schema.sessions.id });
        const [row] = await tx
          .insert(schema.sessions)
          .values({ id, userId: user.id, lastRenewAt: now, expiresAt, maxTimeAt, external: external ?? null })
          .returning();
        await tx.update(schema.users).set({ accessedAt: now }).where(eq(schema.users.id, user.id));
        return row!;
      });
      ended(previous.map((p) => p.id));
      return { token: await issueToken(user, session, seconds(now)), ended: previous.map((p) => p.id) };
    },

    /** The live session behind a login token, or 401. */
    async require(claims: TTokenClaims): Promise<SessionRow> {
      const [session] = await db.select().from(schema.sessions).where(eq(schema.sessions.id, sessionIdOf(claims)));
      return liveSession(session);
    },

    async renew(token: string): Promise<string> {
      const claims = await tokens.verifySignatureOnly(token);
      const session = await this.require(claims);
      const now = Math.floor(Date.now() / 1000) * 1000;
      if (now > session.lastRenewAt.getTime() + limits.maxRenewSeconds * 1000) {
        throw unauthorized('session_expired', 'Session expired');
      }
      const [user] = await db.select().from(schema.users).where(eq(schema.users.id, session.userId));
      if (!user || !user.active) throw unauthorized('session_expired', 'Session expired');
      const expiresAt = new Date(Math.min(now + limits.tokenSeconds * 1000, session.maxTimeAt.getTime()));
      const [updated] = await db
        .update(schema.sessions)
        .set({ lastRenewAt: new Date(now), expiresAt })
        .where(eq(schema.sessions.id, session.id))
        .returning();
      return issueToken(user, updated!, Math.floor(now / 1000));
    },

    async revoke(sessionId: string) {
      await db.update(schema.sessions).set({ revokedAt: new Date() }).where(eq(schema.sessions.id, sessionId));
      ended([sessionId]);
    },

    /** Ends every session of a user (disabled, deleted, password changed elsewhere). */
    async revokeAllOf(userId: string, exceptSessionId?: string) {
      const where = exceptSessionId
        ? and(eq(schema.sessions.userId, userId), ne(schema.sessions.id, exceptSessionId), isNull(schema.sessions.revokedAt))
        : and(eq(schema.sessions.userId, userId), isNull(schema.sessions.revokedAt));
      const rows = await db.update(schema.sessions).set({ revokedAt: new Date() }).where(where).returning({ id: schema.sessions.id });
      ended(rows.map((r) => r.id));
      return rows;
    },

    onEnded(listener: (sessionIds: string[]) => void) {
      endedListeners.add(listener);
      return () => endedListeners.delete(listener);
    },

    /** The `sessions` setting (null fields keep the configured value); applies to the next sign-in and renewal. */
    applySetting(setting: { token_seconds: number | null; max_renew_seconds: number | null; max_seconds: number | null }) {
      limits = {
        tokenSeconds: setting.token_seconds ?? configured.tokenSeconds,
        maxRenewSeconds: setting.max_renew_seconds ?? configured.maxRenewSeconds,
        maxSeconds: setting.max_seconds ?? configured.maxSeconds,
      };
    },

    maxRenewTime: (session: SessionRow) => seconds(session.lastRenewAt) + limits.maxRenewSeconds,
    maxTime: (session: SessionRow) => seconds(session.maxTimeAt),
  };
}
export type SessionService = ReturnType<typeof createSessionService>;
