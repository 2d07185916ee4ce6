import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, desc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { ZAdminBackupJob, ZAdminBackups, ZAdminBackupStart, ZBackupName, type TAdminBackupJob } from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema } from '../../../db';
import { conflict, notFound } from '../../../http/errors';
import { authOf, requireAuth } from '../../../http/guard';
import { audit, auditActorOf } from '../../../audit/record';
import { listBackups, makeBackup, pruneBackups } from '../../../backup/archive';
import type { JobRow } from '../../../jobs/runner';

export const BACKUP_JOB = 'backup';

/** Where the server keeps its backups. */
export const backupsDir = (ctx: AppContext) => join(ctx.config.dataDir, 'backups');

const jobView = (job: JobRow): TAdminBackupJob => ({
  id: job.id,
  status: job.status as TAdminBackupJob['status'],
  progress: job.progress,
  error: job.error,
  created: job.createdAt.toISOString(),
  updated: job.updatedAt.toISOString(),
  name: typeof job.params.name === 'string' ? job.params.name : null,
});

/**
 * Backups of the installation (issue 29), made by the running server (the embedded database's folder
 * is locked by it): an admin starts one (console or API token; a job with progress), lists them and
 * downloads one. `npm run backup` does the same through the API; `npm run restore` restores.
 */
export async function adminBackupRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const adminOnly = requireAuth(ctx, { roles: ['admin'] });
  const kind = ctx.config.databaseUrl ? 'postgres' : 'pglite';

  ctx.jobs.register({
    kind: BACKUP_JOB,
    resumable: false,
    async run(jc) {
      const made = await makeBackup({
        database: { db: ctx.db, kind },
        dataDir: ctx.config.dataDir,
        outDir: backupsDir(ctx),
        disks: jc.job.params.disks === true,
        signal: jc.signal,
        progress: (p, step) => jc.progress(p, { step }),
      });
      await ctx.db.update(schema.jobs).set({ params: { ...jc.job.params, name: made.name, size: made.size } }).where(eq(schema.jobs.id, jc.job.id));
      ctx.log.info({ job: jc.job.id, backup: made.name, bytes: made.size }, 'backup made');
      const pruned = await pruneBackups(backupsDir(ctx), ctx.config.backupKeep, made.name).catch((err: unknown) => {
        ctx.log.warn({ err }, 'old backups not pruned');
        return [];
      });
      if (pruned.length) ctx.log.info({ pruned, keep: ctx.config.backupKeep }, 'old backups deleted (BACKUP_KEEP)');
    },
  });

  const lastJob = async () => {
    const [job] = await ctx.db.select().from(schema.jobs).where(eq(schema.jobs.kind, BACKUP_JOB)).orderBy(desc(schema.jobs.createdAt)).limit(1);
    return job ?? null;
  };

  r.get('/admin/backups', { preHandler: adminOnly, schema: { response: { 200: ZAdminBackups } } }, async () => {
    const items = (await listBackups(backupsDir(ctx))).map((b) => ({ name: b.name, size: b.size, created: b.created.toISOString() }));
    const job = await lastJob();
    return { items, last: items[0] ?? null, job: job ? jobView(job) : null };
  });

  r.post('/admin/backups', { preHandler: adminOnly, schema: { body: ZAdminBackupStart.optional(), response: { 202: ZAdminBackupJob } } }, async (request, reply) => {
    const disks = request.body?.disks ?? false;
    const [busy] = await ctx.db
      .select({ id: schema.jobs.id })
      .from(schema.jobs)
      .where(and(eq(schema.jobs.kind, BACKUP_JOB), inArray(schema.jobs.status, ['queued', 'running'])))
      .limit(1);
    if (busy) throw conflict('backup_running', 'A backup is being made already', { job: busy.id });
    const me = authOf(request).user;
    const { job } = await ctx.jobs.enqueue(BACKUP_JOB, { userId: me.id, targetId: me.id, params: { disks } });
    await audit(ctx.db, auditActorOf(request), { action: 'backup.create', objectType: 'backup', objectId: job.id, objectName: job.id, detail: { disks } });
    return reply.code(202).send(jobView(job));
  });

  r.get('/admin/backups/job/:id', { preHandler: adminOnly, schema: { params: z.object({ id: z.string().max(64) }), response: { 200: ZAdminBackupJob } } }, async (request) => {
    const [job] = await ctx.db.select().from(schema.jobs).where(and(eq(schema.jobs.id, request.params.id), eq(schema.jobs.kind, BACKUP_JOB)));
    if (!job) throw notFound('not_found', 'Backup job not found');
    return jobView(job);
  });

  r.get('/admin/backups/file/:name', { preHandler: adminOnly, schema: { params: z.object({ name: ZBackupName }) } }, async (request, reply) => {
    const { name } = request.params;
    const path = join(backupsDir(ctx), name);
    const st = await stat(path).catch(() => null);
    if (!st?.isFile()) throw notFound('not_found', 'Backup not found');
    await audit(ctx.db, auditActorOf(request), { action: 'backup.download', objectType: 'backup', objectId: name, objectName: name });
    return reply
      .header('content-type', 'application/gzip')
      .header('content-length', String(st.size))
      .header('content-disposition', `attachment; filename="${name}"`)
      .send(createReadStream(path));
  });
}
