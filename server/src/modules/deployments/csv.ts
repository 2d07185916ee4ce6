import { eq, inArray } from 'drizzle-orm';
import { DIRECT_VIEWER_CSV_COLUMNS } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { directLink, newJumperToken } from '../direct/routes';
import { reachesDesktop, type DeploymentRow } from './access';
import type { Actor } from '../../auth/caller';
import { desktopsOf } from './view';
import { csvFile } from '../../http/csv';

/**
 * GET /deployments/directviewer_csv/{id}: each user of the deployment and the direct-viewer link
 * of their desktop. Desktops without a link get one; `reset` gives every desktop a new one (the
 * old links stop working). Only the desktops the caller may reach (a co-owner: their category's).
 */
export async function directViewerCsv(ctx: AppContext, d: DeploymentRow, actor: Actor, base: string, reset: boolean): Promise<string> {
  const { db } = ctx;
  const desktops = (await desktopsOf(db, [d.id])).filter((r) => reachesDesktop(actor, d, r));
  const links = new Map<string, string>();
  for (const r of desktops) {
    let token = r.jumperUrl;
    if (reset || !token) {
      token = newJumperToken();
      await db.update(schema.domains).set({ jumperUrl: token }).where(eq(schema.domains.id, r.id));
    }
    links.set(r.id, directLink(base, token));
  }
  const users = desktops.length ? await db.select().from(schema.users).where(inArray(schema.users.id, desktops.map((r) => r.userId))) : [];
  const groups = await db.select({ id: schema.groups.id, name: schema.groups.name }).from(schema.groups);
  const cats = await db.select({ id: schema.categories.id, name: schema.categories.name }).from(schema.categories);
  const lines: string[][] = [[...DIRECT_VIEWER_CSV_COLUMNS]];
  const rows = desktops
    .map((r) => ({ r, u: users.find((u) => u.id === r.userId) }))
    .sort((a, b) => (a.u?.name ?? '').localeCompare(b.u?.name ?? ''));
  for (const { r, u } of rows) {
    lines.push([
      u?.username ?? '',
      u?.name ?? '',
      u?.email ?? '',
      groups.find((g) => g.id === r.groupId)?.name ?? r.groupId,
      cats.find((c) => c.id === r.categoryId)?.name ?? r.categoryId,
      r.name,
      links.get(r.id)!,
    ]);
  }
  return csvFile(lines);
}
