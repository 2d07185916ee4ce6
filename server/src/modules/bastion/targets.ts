// Bastion targets: one per desktop, made on its first read (reference §2.15).
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { REACHABLE, statusIn, type TBastion, type TBastionUpdate } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { checkAuthorizedKeys } from './keys';

type TargetRow = typeof schema.bastionTargets.$inferSelect;

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function bastionView(t: TargetRow, desktopUserId: string): TBastion {
  return {
    id: t.id,
    desktop_id: t.desktopId,
    user_id: desktopUserId,
    domains: [],
    http: { enabled: t.httpEnabled, http_port: t.httpPort, https_port: t.httpsPort, proxy_protocol: false },
    ssh: { enabled: t.sshEnabled, port: t.sshPort, authorized_keys: t.authorizedKeys },
  };
}

export async function targetOf(ctx: AppContext, desktop: { id: string; userId: string }): Promise<TargetRow> {
  const [found] = await ctx.db.select().from(schema.bastionTargets).where(eq(schema.bastionTargets.desktopId, desktop.id));
  if (found) return found;
  await ctx.db.insert(schema.bastionTargets).values({ id: randomUUID(), desktopId: desktop.id, userId: desktop.userId }).onConflictDoNothing();
  const [made] = await ctx.db.select().from(schema.bastionTargets).where(eq(schema.bastionTargets.desktopId, desktop.id));
  return made!;
}

export async function updateTarget(ctx: AppContext, desktop: { id: string; userId: string }, body: TBastionUpdate): Promise<TargetRow> {
  // Keys are checked before anything is written.
  const keys = body.ssh?.authorized_keys === undefined ? undefined : checkAuthorizedKeys(body.ssh.authorized_keys);
  const target = await targetOf(ctx, desktop);
  const set: Partial<TargetRow> = {};
  if (body.http?.enabled !== undefined) set.httpEnabled = body.http.enabled;
  if (body.http?.http_port !== undefined) set.httpPort = body.http.http_port;
  if (body.http?.https_port !== undefined) set.httpsPort = body.http.https_port;
  if (body.ssh?.enabled !== undefined) set.sshEnabled = body.ssh.enabled;
  if (body.ssh?.port !== undefined) set.sshPort = body.ssh.port;
  if (keys !== undefined) set.authorizedKeys = keys;
  if (Object.keys(set).length === 0) return target;
  const [row] = await ctx.db.update(schema.bastionTargets).set(set).where(eq(schema.bastionTargets.id, target.id)).returning();
  return row!;
}

/** Where a connection for `targetId` may go: the started desktop's own address, or null. Never log the answer. */
export async function routeOf(ctx: AppContext, targetId: string, kind: 'ssh' | 'http' | 'https') {
  if (!UUID_RE.test(targetId)) return null;
  if (!(await ctx.settings.get('bastion')).enabled) return null;
  const [row] = await ctx.db
    .select({ target: schema.bastionTargets, status: schema.domains.status, guestIp: schema.domains.guestIp, guest: schema.domains.guestProperties })
    .from(schema.bastionTargets)
    .innerJoin(schema.domains, eq(schema.domains.id, schema.bastionTargets.desktopId))
    .innerJoin(schema.users, and(eq(schema.users.id, schema.domains.userId), eq(schema.users.active, true)))
    .where(eq(schema.bastionTargets.id, targetId));
  if (!row || !statusIn(REACHABLE, row.status) || !row.guestIp) return null;
  const t = row.target;
  if (kind === 'ssh') {
    if (!t.sshEnabled) return null;
    return { host: row.guestIp, port: t.sshPort, keys: t.authorizedKeys, credentials: row.guest.credentials };
  }
  if (!t.httpEnabled) return null;
  return { host: row.guestIp, port: kind === 'http' ? t.httpPort : t.httpsPort, keys: [], credentials: row.guest.credentials };
}
