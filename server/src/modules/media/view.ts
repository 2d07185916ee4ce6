import { and, asc, eq, ne } from 'drizzle-orm';
import { AT_REST, statusIn, type TMedia, type TMediaDesktop, type TMediaKind } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import { canManage } from '../access/permissions';
import { type Actor } from '../../auth/caller';
import { ownerNamesOf } from '../access/owner-names';

export type MediaRow = typeof schema.media.$inferSelect;

const epoch = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

export async function findMedia(db: Db, id: string): Promise<MediaRow | undefined> {
  return (await db.select().from(schema.media).where(eq(schema.media.id, id)))[0];
}

/** Every media that is not deleted (those are hidden from every list). */
export async function listedMedia(db: Db, where?: ReturnType<typeof eq>) {
  const visible = ne(schema.media.status, 'deleted');
  return db
    .select()
    .from(schema.media)
    .where(where ? and(visible, where) : visible)
    .orderBy(asc(schema.media.name));
}

/** The media as GET /media, GET /media_allowed and the media_* events carry it (reference §2.13). */
export async function mediaViews(db: Db, rows: MediaRow[], actor: Actor | null): Promise<TMedia[]> {
  const n = await ownerNamesOf(db, rows);
  return rows.map((m) => ({
    id: m.id,
    name: m.name,
    description: m.description,
    url: m.url,
    kind: m.kind as TMediaKind,
    type: m.kind as TMediaKind,
    status: m.status,
    icon: m.icon,
    user: m.userId,
    user_name: n.users.get(m.userId) ?? null,
    category: m.categoryId,
    category_name: n.cats.get(m.categoryId) ?? null,
    group: m.groupId,
    group_name: n.groups.get(m.groupId) ?? null,
    allowed: m.allowed,
    progress: m.progress ?? null,
    size: m.size,
    detail: m.detail,
    accessed: epoch(m.accessedAt),
    created: epoch(m.createdAt) ?? 0,
    // Events go to the owner, who may always manage their media.
    editable: actor ? canManage(actor, m) : true,
  }));
}

/** The desktops (and templates) a media is attached to, for the delete modal. */
export async function desktopsUsing(db: Db, mediaId: string): Promise<(TMediaDesktop & { running: boolean })[]> {
  const rows = await db
    .select({ d: schema.domains, userName: schema.users.name })
    .from(schema.domainMedia)
    .innerJoin(schema.domains, eq(schema.domains.id, schema.domainMedia.domainId))
    .innerJoin(schema.users, eq(schema.users.id, schema.domains.userId))
    .where(eq(schema.domainMedia.mediaId, mediaId))
    .orderBy(asc(schema.domains.name));
  return rows.map(({ d, userName }) => ({
    id: d.id,
    name: d.name,
    kind: d.kind,
    status: d.status,
    user: d.userId,
    user_name: userName,
    running: !statusIn(AT_REST, d.status),
  }));
}
