/**
 * Short-lived state of redirect sign-ins in the database (identity_flows), so that whichever server process the
 * provider sends the person back to finds it: OIDC state (nonce, PKCE verifier), SAML request ids, seen assertion
 * ids (a replay is refused while its row lives) and test previews for the console.
 */
import { and, eq, gt, lt } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { schema } from '../../db';

const f = schema.identityFlows;

export async function putFlow(ctx: AppContext, id: string, providerId: string, data: Record<string, unknown>, ttlSeconds: number) {
  await ctx.db.delete(f).where(lt(f.expiresAt, new Date()));
  await ctx.db.insert(f).values({ id, providerId, data, expiresAt: new Date(Date.now() + ttlSeconds * 1000) });
}

/** The flow's data, once: it is deleted as it is read (an expired or unknown one is undefined). */
export async function takeFlow(ctx: AppContext, id: string, providerId: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await ctx.db.delete(f).where(and(eq(f.id, id), eq(f.providerId, providerId))).returning();
  return row && row.expiresAt > new Date() ? row.data : undefined;
}

/** A flow's data without spending it (a test preview the console reads). */
export async function peekFlow(ctx: AppContext, id: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await ctx.db.select().from(f).where(and(eq(f.id, id), gt(f.expiresAt, new Date())));
  return row?.data;
}

/** True the first time `key` is seen (kept `ttlSeconds`), false for a replay. */
export async function firstUse(ctx: AppContext, key: string, providerId: string, ttlSeconds: number): Promise<boolean> {
  await ctx.db.delete(f).where(lt(f.expiresAt, new Date()));
  const rows = await ctx.db
    .insert(f)
    .values({ id: `seen:${key}`, providerId, data: {}, expiresAt: new Date(Date.now() + ttlSeconds * 1000) })
    .onConflictDoNothing()
    .returning({ id: f.id });
  return rows.length === 1;
}
