/**
 * CSV user import: text/csv, header username,name,email,role,group,password; the category is the group's.
 *
 * - A dry run (`dry_run=true`) checks every row and answers at once; it writes nothing.
 * - A real import runs as a job (`user_import`, in the console's jobs): the request reads the header
 *   and counts the rows, then answers 202 with the job. The job checks the rows, then creates each
 *   valid one in its own transaction (as the dry run would have reported it). Its progress goes to
 *   the job row and live to the console (`user_import` on /administrators). A cancel stops it
 *   between two rows; the rows created before stay. At the end the job keeps the rows that were
 *   not created, with their reasons, for GET /admin/users/import/{id}.
 * - Not resumable: a restart marks it failed (the file is not kept); the rows created stay.
 */
import type { FastifyRequest } from 'fastify';
import { and, eq } from 'drizzle-orm';
import { ROLES, USER_CSV_HEADER, USER_IMPORT_JOB, ZUsername, type TAdminImportAnswer, type TAdminImportJob, type TAdminImportRow, type TRole } from '@vdi/contracts';
import { z } from 'zod';
import type { AppContext } from '../../../context';
import { schema, type Db } from '../../../db';
import { auditActorOf, audit, type AuditActor } from '../../../audit/record';
import { ApiError, badRequest, notFound } from '../../../http/errors';
import { authOf } from '../../../http/guard';
import { hashPassword } from '../../../auth/passwords';
import type { JobRow } from '../../../jobs/runner';
import { notifyAdmins } from '../../../socket/admins';
import { boundCategory, isAdmin } from '../people/scope';
import { parseCsv } from './csv';
import { insertUser, newUserProblems, throwProblem, userLimitProblem, type NewUser, type RowProblem } from './service';

const ZEmail = z.string().email();
const MAX_ROWS = 10_000;
/** The share of the progress bar the checks take; the creations take the rest. */
const CHECK_SHARE = 20;

type Row = { line: number; cells: string[] };
type Checked = { row: TAdminImportRow; user?: NewUser };
type ImportInput = { rows: Row[]; bound: string | null; actor: AuditActor };
/** What the job row's `params` hold. */
type ImportParams = { total: number; done: number; created: number; failed: number; rows?: TAdminImportRow[] };

/** The file's rows without the header; a wrong header or too many rows are refused here (400). */
function readRows(text: string): Row[] {
  const rows = parseCsv(text);
  const header = rows.shift();
  const names = header?.cells.map((h) => h.trim().toLowerCase()) ?? [];
  if (!header || USER_CSV_HEADER.some((h, i) => names[i] !== h)) {
    throw badRequest('csv_bad_header', `The header row must be ${USER_CSV_HEADER.join(',')}`, { expected: USER_CSV_HEADER.join(',') });
  }
  if (rows.length > MAX_ROWS) throw badRequest('validation_error', 'At most 10,000 rows per import');
  return rows;
}

/** Checks every row (format, group within reach, username free, limits), as a dry run reports them. */
async function checkRows(db: Db, rows: Row[], bound: string | null, step?: (checked: number) => Promise<void>): Promise<Checked[]> {
  const groups = await db
    .select({ id: schema.groups.id, name: schema.groups.name, categoryId: schema.groups.categoryId })
    .from(schema.groups)
    .where(bound === null ? undefined : eq(schema.groups.categoryId, bound));
  const seen = new Map<string, number>();
  const checked: Checked[] = [];
  // How many valid rows each group and category would get: the `users` limits count them.
  const adding = new Map<string, number>();
  for (const { line, cells } of rows) {
    await step?.(checked.length);
    const [username = '', name = '', email = '', role = '', group = '', password = ''] = cells.map((x) => x.trim());
    const errors: RowProblem[] = [];
    const row: TAdminImportRow = { line, username, status: 'valid', errors: errors as TAdminImportRow['errors'] };
    checked.push({ row });
    if (cells.length !== USER_CSV_HEADER.length) errors.push({ code: 'validation_error', params: { columns: cells.length } });
    if (!ZUsername.safeParse(username).success) errors.push({ code: username ? 'invalid_characters' : 'missing_required_data', params: { field: 'username' } });
    if (!name) errors.push({ code: 'missing_required_data', params: { field: 'name' } });
    if (email && !ZEmail.safeParse(email).success) errors.push({ code: 'invalid_email', params: { email } });
    if (!(ROLES as readonly string[]).includes(role)) errors.push({ code: 'invalid_role', params: { role } });
    else if (role === 'admin' && bound !== null) errors.push({ code: 'forbidden', params: { role } });
    if (!password) errors.push({ code: 'missing_required_data', params: { field: 'password' } });
    const byId = groups.find((x) => x.id === group);
    const byName = groups.filter((x) => x.name.toLowerCase() === group.toLowerCase());
    const target = byId ?? (byName.length === 1 ? byName[0] : undefined);
    if (!target) errors.push({ code: 'group_not_found', params: { group, ...(byName.length > 1 ? { ambiguous: true } : {}) } });
    const key = `${target?.categoryId ?? ''}/${username.toLowerCase()}`;
    if (username && seen.has(key)) errors.push({ code: 'username_exists', params: { username, line: seen.get(key) } });
    else if (username) seen.set(key, line);
    if (errors.length || !target) continue;
    const user: NewUser = {
      username, name, email, role: role as TRole, categoryId: target.categoryId, groupId: target.id,
      secondaryGroups: [], active: true, password, quota: null,
    };
    errors.push(...(await newUserProblems(db, user)));
    if (!errors.length) {
      const inGroup = (adding.get(`g:${target.id}`) ?? 0) + 1;
      const inCategory = (adding.get(`c:${target.categoryId}`) ?? 0) + 1;
      const limit = await userLimitProblem(db, target.id, target.categoryId, { group: inGroup, category: inCategory });
      if (limit) errors.push(limit);
      else {
        adding.set(`g:${target.id}`, inGroup);
        adding.set(`c:${target.categoryId}`, inCategory);
      }
    }
    if (!errors.length) checked[checked.length - 1]!.user = user;
  }
  for (const c of checked) if (c.row.errors.length) c.row.status = 'error';
  return checked;
}

/** POST /admin/users/import?dry_run=true: every row checked, nothing written. */
export async function dryRunImport(ctx: AppContext, request: FastifyRequest, text: string): Promise<TAdminImportAnswer> {
  const checked = await checkRows(ctx.db, readRows(text), boundCategory(request));
  const valid = checked.filter((c) => c.user).length;
  return { dry_run: true, total: checked.length, valid, invalid: checked.length - valid, created: 0, rows: checked.map((c) => c.row) };
}

function jobView(job: JobRow): TAdminImportJob {
  const p = job.params as Partial<ImportParams>;
  return {
    id: job.id,
    status: job.status,
    progress: job.progress,
    error: job.error,
    total: p.total ?? 0,
    done: p.done ?? 0,
    created: p.created ?? 0,
    failed: p.failed ?? 0,
    rows: p.rows ?? [],
  };
}

/** The live event: the counts, without the rows. */
function publish(ctx: AppContext, job: JobRow, categoryId: string | null) {
  const { rows: _rows, ...counts } = jobView(job);
  notifyAdmins(ctx, categoryId, 'user_import', counts);
}

/** The job's handler (registered once, with the other jobs). */
export function registerImportJob(ctx: AppContext) {
  const { db } = ctx;
  /** The initiator's category: the managers of it see the job, as in the jobs list. */
  const categoryOfJob = async (job: JobRow) => {
    const [u] = await db.select({ categoryId: schema.users.categoryId }).from(schema.users).where(eq(schema.users.id, job.userId));
    return u?.categoryId ?? null;
  };
  ctx.jobs.register({
    kind: USER_IMPORT_JOB,
    resumable: false,
    async run(jc) {
      const input = jc.input as ImportInput | undefined;
      if (!input) throw new Error('the file is gone (server restarted)');
      const total = input.rows.length;
      const counts: ImportParams = { total, done: 0, created: 0, failed: 0 };
      const stopIfCancelled = () => {
        if (jc.signal.aborted) throw new Error('cancelled');
      };
      let checked: Checked[] = [];
      try {
        checked = await checkRows(db, input.rows, input.bound, async (n) => {
          stopIfCancelled();
          await jc.progress((CHECK_SHARE * n) / Math.max(total, 1), { ...counts, done: n });
        });
        counts.failed = checked.filter((c) => !c.user).length;
        counts.done = counts.failed;
        const valid = checked.filter((c) => c.user);
        for (const [i, c] of valid.entries()) {
          stopIfCancelled();
          await jc.progress(CHECK_SHARE + ((100 - CHECK_SHARE) * i) / valid.length, { ...counts });
          const n = c.user!;
          try {
            const passwordHash = n.password === null ? null : await hashPassword(n.password);
            await db.transaction(async (tx) => {
              const again = await newUserProblems(tx, n);
              const limit = again[0] ?? (await userLimitProblem(tx, n.groupId, n.categoryId));
              if (limit) throwProblem(limit);
              const row = await insertUser(tx, n, passwordHash);
              await audit(tx, input.actor, {
                action: 'user.create', objectType: 'user', objectId: row.id, objectName: row.username, categoryId: row.categoryId,
                detail: { role: row.roleId, group: row.groupId, import: true, job: jc.job.id },
              });
            });
            c.row.status = 'created';
            counts.created++;
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            c.row.status = 'error';
            c.row.errors.push({ code: err.code, params: err.params });
            counts.failed++;
          }
          counts.done++;
        }
      } finally {
        // Whatever the end (done, cancelled, failed): the counts and the rows not created are kept.
        const rows = checked.filter((c) => c.row.status !== 'created').map((c) => c.row);
        await db.update(schema.jobs).set({ params: { ...counts, rows } }).where(eq(schema.jobs.id, jc.job.id));
        if (counts.created) {
          await audit(db, input.actor, {
            action: 'user.import', objectType: 'user', objectName: `${counts.created} users`,
            detail: { created: counts.created, rows: total, job: jc.job.id },
          });
        }
      }
    },
    progressed(job) {
      void categoryOfJob(job).then((c) => publish(ctx, job, c));
    },
    async finished(job) {
      const [fresh] = await db.select().from(schema.jobs).where(eq(schema.jobs.id, job.id));
      publish(ctx, fresh ?? job, await categoryOfJob(job));
    },
  });
}

/** POST /admin/users/import?dry_run=false: the header and row count checked, then the job started; answers it at once. */
export async function startImport(ctx: AppContext, request: FastifyRequest, text: string): Promise<TAdminImportJob> {
  const rows = readRows(text);
  const me = authOf(request).user;
  const input: ImportInput = { rows, bound: boundCategory(request), actor: auditActorOf(request) };
  const params: ImportParams = { total: rows.length, done: 0, created: 0, failed: 0 };
  const { job } = await ctx.jobs.enqueue(USER_IMPORT_JOB, { userId: me.id, targetId: me.id, params, input });
  return jobView(job);
}

/** GET /admin/users/import/{id}: an import job of the caller's (an admin: anyone's), else 404. */
export async function importJob(ctx: AppContext, request: FastifyRequest, id: string): Promise<TAdminImportJob> {
  const auth = authOf(request);
  const [job] = await ctx.db
    .select()
    .from(schema.jobs)
    .where(and(eq(schema.jobs.id, id), eq(schema.jobs.kind, USER_IMPORT_JOB), isAdmin(auth) ? undefined : eq(schema.jobs.userId, auth.user.id)));
  if (!job) throw notFound('not_found', 'Import not found');
  return jobView(job);
}
