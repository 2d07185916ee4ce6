import { and, asc, count, desc, eq, gte, ilike, lt, or, sql, type SQL } from 'drizzle-orm';
import type { TAuditEntry, TAuditQuery } from '@vdi/contracts';
import type { AuthInfo } from '../../../http/guard';
import { schema, type Db } from '../../../db';
import type { AuditRow } from '../../../audit/record';
import { csvFile } from '../../../http/csv';

const t = schema.auditLog;

/** `%` and `_` typed by a person are literal characters in a search, not patterns. */
const likeText = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** A `to` given as a date alone covers that whole day. */
const endOf = (to: string) => (/^\d{4}-\d{2}-\d{2}$/.test(to) ? new Date(new Date(`${to}T00:00:00Z`).getTime() + 86_400_000) : new Date(new Date(to).getTime() + 1));

/** The filters of a query as SQL, within what the caller may see (managers: their category's entries). */
export function auditWhere(me: AuthInfo, q: Omit<TAuditQuery, 'page' | 'per_page'>): SQL | undefined {
  const parts: (SQL | undefined)[] = [];
  if (me.role !== 'admin') parts.push(eq(t.categoryId, me.user.categoryId));
  if (q.actor) parts.push(or(eq(t.actorId, q.actor), ilike(t.actorName, likeText(q.actor))));
  if (q.action) parts.push(q.action.endsWith('.') ? ilike(t.action, `${q.action.replace(/[\\%_]/g, (c) => `\\${c}`)}%`) : eq(t.action, q.action));
  if (q.object) parts.push(or(eq(t.objectId, q.object), ilike(t.objectName, likeText(q.object))));
  if (q.from) parts.push(gte(t.at, new Date(q.from)));
  if (q.to) parts.push(lt(t.at, endOf(q.to)));
  if (q.search) {
    const s = likeText(q.search);
    parts.push(or(ilike(t.action, s), ilike(t.actorName, s), ilike(t.objectName, s), ilike(t.objectType, s), ilike(sql`coalesce(${t.address}, '')`, s)));
  }
  return and(...parts);
}

export const auditView = (r: AuditRow): TAuditEntry => ({
  id: r.id,
  at: r.at.toISOString(),
  actor_id: r.actorId,
  actor_name: r.actorName,
  actor_role: r.actorRole,
  action: r.action,
  object_type: r.objectType,
  object_id: r.objectId,
  object_name: r.objectName,
  category_id: r.categoryId,
  address: r.address,
  detail: r.detail,
});

/** One page of the log, newest first (or oldest first with `sort=at`), and the filtered total. */
export async function listAudit(db: Db, me: AuthInfo, q: TAuditQuery & { page: number; per_page: number }) {
  const where = auditWhere(me, q);
  const order = q.sort === 'at' ? [asc(t.at), asc(t.id)] : [desc(t.at), desc(t.id)];
  const [rows, [total]] = await Promise.all([
    db.select().from(t).where(where).orderBy(...order).limit(q.per_page).offset((q.page - 1) * q.per_page),
    db.select({ n: count() }).from(t).where(where),
  ]);
  return { items: rows.map(auditView), total: Number(total?.n ?? 0) };
}

const CSV_COLUMNS = ['at', 'actor_name', 'actor_role', 'action', 'object_type', 'object_id', 'object_name', 'category_id', 'address', 'detail'] as const;

export const auditCsv = (entries: TAuditEntry[]): string => csvFile([[...CSV_COLUMNS], ...entries.map((e) => CSV_COLUMNS.map((c) => e[c]))]);
