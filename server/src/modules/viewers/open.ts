import type { FastifyRequest } from 'fastify';
import { eq } from 'drizzle-orm';
import type { TViewer, TViewerAnswer } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { authOf } from '../../http/guard';
import { requestBaseUrl } from '../../http/base-url';
import { auditActorOf, audit } from '../../audit/record';
import type { DomainRow } from '../shared/domains';
import { viewerFor } from './service';

/**
 * The CONNECT proxy a SPICE client goes through: this portal's own address. "localhost" is
 * written as 127.0.0.1: SPICE clients try ::1 first, and the portal may listen on IPv4 only.
 */
export function spiceProxyOf(base: string) {
  const url = new URL(base);
  if (url.hostname === 'localhost') url.hostname = '127.0.0.1';
  return `http://${url.host}`;
}

/**
 * Opens a viewer of a desktop the caller may reach (the portal's call and the console's "open as
 * support"): the ticket or file, the desktop's last access, and — when it is someone else's
 * screen — the audit entry `viewer.open_other` (a security event). `support`: the console's
 * call; the entry says so and the owner hears it live (`support_viewer`, a notice in their portal).
 */
export async function openViewer(
  ctx: AppContext,
  request: FastifyRequest,
  row: DomainRow,
  viewer: TViewer,
  /** `accessedNow`: the caller wrote the desktop's last access with what it did (a pool's giving) */
  opts: { support?: boolean; poolViewers?: readonly TViewer[]; accessedNow?: boolean } = {},
): Promise<TViewerAnswer> {
  const me = authOf(request).user;
  // A live connection for this person's own request, used at once: the address they reached may do (requestBaseUrl).
  const answer = await viewerFor(ctx, row, viewer, { userId: me.id, proxy: spiceProxyOf(requestBaseUrl(ctx.config, request)), poolViewers: opts.poolViewers });
  if (!opts.accessedNow) await ctx.db.update(schema.domains).set({ accessedAt: new Date() }).where(eq(schema.domains.id, row.id));
  if (row.userId !== me.id) {
    await audit(ctx.db, auditActorOf(request), {
      action: 'viewer.open_other',
      objectType: 'desktop',
      objectId: row.id,
      objectName: row.name,
      categoryId: row.categoryId,
      detail: { viewer, owner_id: row.userId, ...(opts.support ? { support: true } : {}) },
    });
    if (opts.support) ctx.bus.toUser(row.userId, 'support_viewer', { desktop_id: row.id, desktop_name: row.name, by: me.name || me.username, viewer });
  }
  return answer;
}
