import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { alias } from 'drizzle-orm/pg-core';
import { and, count, eq, ilike, inArray, or, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { ZAdminJob, ZAdminJobList, ZAdminJobsQuery, type TAdminJob } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema, type Db } from '../../../db';
import { conflict, notFound } from '../../../http/errors';
import { auditActorOf, audit } from '../../../audit/record';
import { boundCategory, likeTerm, orderOf, peopleGuards } from '../people/scope';

const j = schema.jobs;
const ACTIVE = ['queued', 'running'] as const;
const FINISHED = ['done', 'failed', 'aborted'] as const;
const initiator = alias(schema.users, 'job_initiator');
const diskOwner = alias(schema.users, 'job_disk_owner');
const dom = schema.domains;
const med = schema.media;
const dep = schema.deployments;
const sto = schema.storage;

/** The job's category: its target's (desktop, template, media, deployment, a disk's owner), else its initiator's. */
const categoryOf = sql<string | null>`coalesce(${dom.categoryId}, ${med.categoryId}, ${dep.categoryId}, ${diskOwner.categoryId}, ${initiator.categoryId})`;
/** A disk's template (a template base copied to a hypervisor): its name. */
const templateOfDisk = sql<string | null>`(select t.name from ${schema.domainDisks} dd join ${dom} t on t.id = dd.domain_id where dd.storage_id = ${sto.id} and t.kind = 'template' limit 1)`;
/** The name of what it works on, while that exists (a disk: its template's name, else its path's last part). */
const targetName = sql<string | null>`coalesce(${dom.name}, ${med.name}, ${dep.name}, ${templateOfDisk}, regexp_replace(${sto.path}, '^.*/', ''))`;

/** Jobs with what they work on and who started them: one query, joins on primary keys. */
function jobsFrom(db: Db) {
  return db
    .select({
      job: j,
      userName: initiator.username,
      category: categoryOf,
      targetName,
    })
    .from(j)
    .leftJoin(initiator, eq(initiator.id, j.userId))
    .leftJoin(dom, eq(dom.id, j.targetId))
    .leftJoin(med, eq(med.id, j.targetId))
    .leftJoin(dep, eq(dep.id, j.targetId))
    .leftJoin(sto, eq(sto.id, j.targetId))
    .leftJoin(diskOwner, eq(diskOwner.id, sto.userId))
    .$dynamic();
}

type JobRowWith = { job: typeof j.$inferSelect; userName: string | null; category: string | null; targetName: string | null };
const jobView = (r: JobRowWith): TAdminJob => ({
  id: r.job.id,
  kind: r.job.kind,
  status: r.job.status,
  progress: r.job.progress,
  target_id: r.job.targetId,
  target_name: r.targetName,
  user_id: r.job.userId,
  user_name: r.userName ?? '',
  category: r.category,
  error: r.job.error,
  created: r.job.createdAt.toISOString(),
  updated: r.job.updatedAt.toISOString(),
  bytes: typeof r.job.params.bytes_total === 'number' ? { done: Number(r.job.params.bytes_done ?? 0), total: r.job.params.bytes_total } : null,
});

/** How many jobs match (the same joins as the list, for the category and search). */
async function countJobs(db: Db, where: SQL | undefined): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(j)
    .leftJoin(initiator, eq(initiator.id, j.userId))
    .leftJoin(dom, eq(dom.id, j.targetId))
    .leftJoin(med, eq(med.id, j.targetId))
    .leftJoin(dep, eq(dep.id, j.targetId))
    .leftJoin(sto, eq(sto.id, j.targetId))
    .leftJoin(diskOwner, eq(diskOwner.id, sto.userId))
    .where(where);
  return Number(row?.n ?? 0);
}

/** Jobs busy now (queued or running), within a category (null: all). */
export const busyJobs = (db: Db, category: string | null) =>
  countJobs(db, and(inArray(j.status, [...ACTIVE]), category === null ? undefined : sql`${categoryOf} = ${category}`));

/** One job the caller reaches, else 404 (a manager asking for another category's job included). */
async function reachableJob(db: Db, request: FastifyRequest, id: string) {
  const bound = boundCategory(request);
  const [row] = await jobsFrom(db).where(and(eq(j.id, id), bound === null ? undefined : sql`${categoryOf} = ${bound}`));
  if (!row) throw notFound('not_found', 'Job not found');
  return row;
}

/**
 * Jobs (media downloads, disk growth, template and deployment creation): running and recent ones
 * with progress and initiator, and a cancel that stops the work and undoes what it had made.
 * Admins see all; managers the jobs of their category.
 */
export async function adminJobRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { staff } = peopleGuards(ctx);

  r.get('/admin/jobs', { preHandler: staff, schema: { querystring: ZAdminJobsQuery, response: { 200: ZAdminJobList } } }, async (request) => {
    const q = request.query;
    const bound = boundCategory(request);
    const conds: (SQL | undefined)[] = [];
    if (bound !== null) conds.push(sql`${categoryOf} = ${bound}`);
    else if (q.category) conds.push(sql`${categoryOf} = ${q.category}`);
    if (q.kind) conds.push(eq(j.kind, q.kind));
    if (q.state) conds.push(inArray(j.status, q.state === 'active' ? [...ACTIVE] : [...FINISHED]));
    if (q.search) {
      const s = likeTerm(q.search);
      conds.push(or(ilike(j.kind, s), ilike(initiator.username, s), ilike(sql`coalesce(${targetName}, '')`, s), eq(j.id, q.search), eq(j.targetId, q.search)));
    }
    const where = and(...conds);
    const order = orderOf({ created: j.createdAt, updated: j.updatedAt, kind: j.kind, status: j.status, progress: j.progress }, q.sort, 'created', q.order, j.id);
    const [rows, total] = await Promise.all([
      jobsFrom(ctx.db).where(where).orderBy(...order).limit(q.per_page).offset((q.page - 1) * q.per_page),
      countJobs(ctx.db, where),
    ]);
    return { items: rows.map(jobView), total };
  });

  r.delete(
    '/admin/jobs/:id',
    { preHandler: staff, schema: { params: z.object({ id: z.string().min(1).max(64) }), response: { 200: ZAdminJob } } },
    async (request) => {
      const row = await reachableJob(ctx.db, request, request.params.id);
      if (!(ACTIVE as readonly string[]).includes(row.job.status)) {
        throw conflict('job_not_active', 'The job is no longer running', { status: row.job.status });
      }
      if (!(await ctx.jobs.cancel(row.job.id))) throw conflict('job_not_active', 'The job is no longer running');
      await audit(ctx.db, auditActorOf(request), {
        action: 'job.cancel',
        objectType: 'job',
        objectId: row.job.id,
        objectName: `${row.job.kind}: ${row.targetName ?? row.job.targetId}`,
        categoryId: row.category,
        detail: { kind: row.job.kind, progress: row.job.progress },
      });
      return jobView(await reachableJob(ctx.db, request, row.job.id));
    },
  );
}
