import { isAbsolute, relative, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, count, eq, ilike, inArray, ne, or, sql, type SQL } from 'drizzle-orm';
import {
  ZAdminStorageCheck,
  ZAdminStorageList,
  ZAdminStoragePools,
  ZAdminStorageQuery,
  ZAdminStorageRemove,
  ZAdminStorageRemoved,
  type TAdminStorageItem,
  type TAdminStoragePool,
} from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema, type Db } from '../../../db';
import type { DiskStore } from '../../../engine/storage';
import { auditActorOf, audit } from '../../../audit/record';
import { boundCategory, likeTerm, orderOf, peopleGuards } from '../people/scope';
import { checkStorage } from '../../storage/sweep';

const s = schema.storage;
const u = schema.users;
const c = schema.categories;
const derivatives = sql<number>`(select count(*) from ${s} as child where child.parent_id = ${s.id} and child.status <> 'deleted')`.mapWith(Number);

/** A path as the console shows it: relative to the storage folder (absolute when outside it). */
const shown = (store: DiskStore, path: string) => {
  const rel = store.shown(path);
  return rel.startsWith('..') || isAbsolute(rel) ? path : rel;
};

/** The bases of each disk, nearest first (at most 16 levels), in one query per level. */
async function chains(db: Db, store: DiskStore, rows: { id: string; parentId: string | null }[]) {
  const known = new Map<string, { id: string; path: string; kind: string; status: string; parentId: string | null }>();
  let wanted = [...new Set(rows.map((r) => r.parentId).filter((p): p is string => !!p))];
  for (let level = 0; level < 16 && wanted.length; level++) {
    const found = await db.select({ id: s.id, path: s.path, kind: s.kind, status: s.status, parentId: s.parentId }).from(s).where(inArray(s.id, wanted));
    for (const f of found) known.set(f.id, f);
    wanted = [...new Set(found.map((f) => f.parentId).filter((p): p is string => !!p && !known.has(p)))];
  }
  return (parentId: string | null) => {
    const out: TAdminStorageItem['chain'] = [];
    const seen = new Set<string>();
    for (let at = parentId; at && !seen.has(at); at = known.get(at)?.parentId ?? null) {
      seen.add(at);
      const link = known.get(at);
      out.push(link ? { id: link.id, path: shown(store, link.path), kind: link.kind, status: link.status } : { id: at, path: '', kind: '', status: 'missing' });
    }
    return out;
  };
}

/**
 * Storage in the console: every disk with its chain, owner and status (managers: their
 * category's), the check of files against records (the startup sweep's own rule), removing the
 * orphan files it reports (admins, after confirming), and the pools' free space.
 */
export async function adminStorageRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff, adminOnly } = peopleGuards(ctx);
  const store = ctx.engine.disks;

  r.get('/admin/storage', { preHandler: staff, schema: { querystring: ZAdminStorageQuery, response: { 200: ZAdminStorageList } } }, async (request) => {
    const q = request.query;
    const bound = boundCategory(request);
    const conds: (SQL | undefined)[] = [];
    if (bound !== null) conds.push(eq(u.categoryId, bound));
    else if (q.category) conds.push(eq(u.categoryId, q.category));
    if (q.status) conds.push(eq(s.status, q.status));
    if (q.kind) conds.push(eq(s.kind, q.kind));
    if (q.owner) conds.push(eq(s.userId, q.owner));
    if (q.search) {
      const term = likeTerm(q.search);
      conds.push(or(ilike(s.path, term), ilike(u.username, term), ilike(u.name, term), eq(s.id, q.search)));
    }
    const where = and(...conds);
    const order = orderOf(
      { path: s.path, kind: s.kind, status: s.status, owner: u.username, category: c.name, size: s.actualSize, virtual_size: s.virtualSize, created: s.createdAt, last_used: s.lastUsedAt },
      q.sort,
      'path',
      q.order,
      s.id,
    );
    const [rows, [total]] = await Promise.all([
      ctx.db
        .select({ s, userName: u.username, categoryId: u.categoryId, categoryName: c.name, derivatives })
        .from(s)
        .innerJoin(u, eq(u.id, s.userId))
        .innerJoin(c, eq(c.id, u.categoryId))
        .where(where)
        .orderBy(...order)
        .limit(q.per_page)
        .offset((q.page - 1) * q.per_page),
      ctx.db.select({ n: count() }).from(s).innerJoin(u, eq(u.id, s.userId)).where(where),
    ]);
    const ids = rows.map((x) => x.s.id);
    const users = ids.length
      ? await ctx.db
          .select({ storageId: schema.domainDisks.storageId, id: schema.domains.id, name: schema.domains.name, kind: schema.domains.kind, status: schema.domains.status })
          .from(schema.domainDisks)
          .innerJoin(schema.domains, eq(schema.domains.id, schema.domainDisks.domainId))
          .where(inArray(schema.domainDisks.storageId, ids))
      : [];
    const chainOf = await chains(ctx.db, store, rows.map((x) => x.s));
    const items: TAdminStorageItem[] = rows.map((x) => ({
      id: x.s.id,
      kind: x.s.kind,
      status: x.s.status,
      format: x.s.format,
      path: shown(store, x.s.path),
      parent: x.s.parentId,
      chain: chainOf(x.s.parentId),
      derivatives: x.derivatives,
      user_id: x.s.userId,
      user_name: x.userName,
      category: x.categoryId,
      category_name: x.categoryName,
      domains: users.filter((d) => d.storageId === x.s.id).map(({ id, name, kind, status }) => ({ id, name, kind, status })),
      actual_size: x.s.actualSize,
      virtual_size: x.s.virtualSize,
      created: x.s.createdAt.toISOString(),
      last_used: x.s.lastUsedAt?.toISOString() ?? null,
    }));
    return { items, total: Number(total?.n ?? 0) };
  });

  r.get('/admin/storage/check', { preHandler: staff, schema: { response: { 200: ZAdminStorageCheck } } }, async (request) => {
    const bound = boundCategory(request);
    const check = await checkStorage(ctx);
    const owners = new Map(
      (await ctx.db.select({ id: u.id, username: u.username, categoryId: u.categoryId }).from(u).where(inArray(u.id, [
        ...new Set([...check.storageWithoutFile.map((x) => x.userId), ...check.mediaWithoutFile.map((m) => m.userId)]),
        '',
      ]))).map((o) => [o.id, o]),
    );
    const rows = [
      ...check.storageWithoutFile.map((x) => ({ type: 'storage' as const, id: x.id, name: x.id, status: x.status, path: shown(store, x.path), userId: x.userId })),
      ...check.mediaWithoutFile.map((m) => ({ type: 'media' as const, id: m.id, name: m.name, status: m.status, path: m.path ? shown(store, m.path) : '', userId: m.userId })),
    ]
      .map(({ userId, ...x }) => ({ ...x, user_name: owners.get(userId)?.username ?? '', category: owners.get(userId)?.categoryId ?? '' }))
      .filter((x) => bound === null || x.category === bound);
    // A file no record owns has no category: only admins see them.
    const files = bound === null
      ? await Promise.all(
          check.filesWithoutRecord.map(async (f) => {
            const facts = await store.fileFacts(f);
            return { path: shown(store, f), size: facts?.size ?? 0, modified: (facts?.modified ?? new Date(0)).toISOString() };
          }),
        )
      : [];
    return { checked_at: new Date().toISOString(), files_without_rows: files, rows_without_files: rows };
  });

  r.post(
    '/admin/storage/check/remove',
    { preHandler: adminOnly, schema: { body: ZAdminStorageRemove, response: { 200: ZAdminStorageRemoved } } },
    async (request) => {
      // Checked again now: only a path that is still a file no record owns is removed.
      const orphans = new Set((await checkStorage(ctx)).filesWithoutRecord.map((f) => resolve(f)));
      const removed: string[] = [];
      const skipped: string[] = [];
      for (const asked of [...new Set(request.body.paths)]) {
        const path = store.fromShown(asked);
        // Gone since the check (a missing file is no removal): skipped, as before.
        if (!path || !orphans.has(path) || !(await store.exists(path))) {
          skipped.push(asked);
          continue;
        }
        try {
          await store.remove(path);
          removed.push(asked);
        } catch (err) {
          ctx.log.warn({ err, file: path }, 'could not remove a file that no record owns');
          skipped.push(asked);
        }
      }
      if (removed.length > 0) {
        ctx.log.warn({ files: removed.length }, 'files that no record owns removed by an admin');
        await audit(ctx.db, auditActorOf(request), {
          action: 'storage.orphans_remove',
          objectType: 'storage',
          objectName: removed.length === 1 ? removed[0]! : `${removed.length} files`,
          categoryId: null,
          detail: { count: removed.length, paths: removed.slice(0, 50) },
        });
      }
      return { removed, skipped };
    },
  );

  r.get('/admin/storage/pools', { preHandler: adminOnly, schema: { response: { 200: ZAdminStoragePools } } }, async () => {
    const pools = ctx.engine.disks.pools;
    const items: TAdminStoragePool[] = [];
    for (const p of pools) {
      const like = `${p.dir.replace(/[\\%_]/g, (ch) => `\\${ch}`)}/%`;
      const [used] =
        p.kind === 'media'
          ? await ctx.db.select({ n: count(), size: sql<number>`coalesce(sum(${schema.media.size}), 0)`.mapWith(Number) }).from(schema.media).where(and(sql`${schema.media.path} like ${like}`, ne(schema.media.status, 'deleted')))
          : await ctx.db.select({ n: count(), size: sql<number>`coalesce(sum(${s.actualSize}), 0)`.mapWith(Number) }).from(s).where(and(sql`${s.path} like ${like}`, ne(s.status, 'deleted')));
      const fs = await ctx.engine.disks.space(p.dir).catch(() => null);
      items.push({
        id: p.id,
        path: relative(ctx.config.dataDir, p.dir) || p.dir,
        kind: p.kind,
        available: fs !== null,
        total: fs?.total ?? 0,
        free: fs?.free ?? 0,
        used: fs?.used ?? 0,
        items: Number(used?.n ?? 0),
        items_size: used?.size ?? 0,
      });
    }
    return { items };
  });
}
