import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq, inArray, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { ZDeploymentHardware, ZNewDeployment } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import type { JobHandler } from '../../jobs/runner';
import { badRequest, conflict, notFound } from '../../http/errors';
import { CREATING_DESKTOP, createPlannedDesktops, planDesktopFromTemplate, undoCreation } from '../desktops/create';
import { disksOf } from '../desktops/machine-spec';
import { findDomain, type DomainRow } from '../shared/domains';
import { hardwareBounds } from '../domains/hardware';
import { usableTemplate } from '../domains/new-desktop';
import { findDeployment, type DeploymentRow } from './access';
import type { DeploymentEvents } from './events';
import { checkMoreDeploymentDesktops, checkNewDeploymentQuota } from './quota';
import { createThrottle } from './progress';
import { assertHasUsers, makeCreateDict } from './rules';
import { assertGuestNetworkChoice } from '../domains/guest';
import { choosersOf, selectedUsers, storedAllowed, type DeploymentAllowed } from './users';
import { assertChoosable, chooserOf } from '../access/permissions';
import { DEPLOYMENT_JOB, desktopsOf } from './view';

type JobParams = { userIds: string[]; created?: number; failed?: number };
/** Desktops made at the same time by one creation job. */
const CREATE_CONCURRENCY = 4;
/** Desktops whose records one creation job writes in one transaction (and marks ready in one update). */
const CREATE_CHUNK = 50;

/**
 * Runs `fn` over `items`, at most `n` at a time. After a failure no new item starts, and the pool
 * answers (with the first failure) only once the items under way have ended, so that whoever
 * cleans up after it does not race work still running.
 */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      try {
        await fn(items[next++]!);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(n, items.length) }, worker));
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}

/** A GPU profile must be one the installation offers (the planner's subitems). */
export async function assertKnownVgpus(ctx: AppContext, hw: z.infer<typeof ZDeploymentHardware> | undefined) {
  for (const id of hw?.reservables?.vgpus ?? []) {
    const [sub] = await ctx.db.select({ id: schema.reservableSubitems.id }).from(schema.reservableSubitems).where(eq(schema.reservableSubitems.id, id));
    if (!sub) throw badRequest('reservable_not_found', `No GPU profile ${id}`, { id });
  }
}

export async function ownerRowOf(ctx: AppContext, d: DeploymentRow): Promise<UserRow> {
  const [owner] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, d.userId));
  if (!owner) throw new Error(`deployment ${d.id} has no owner`);
  return owner;
}

/** One creation (or recreate) at a time per deployment. */
export async function assertNotCreating(ctx: AppContext, id: string) {
  if (await ctx.jobs.activeFor(id, DEPLOYMENT_JOB)) throw conflict('deployment_creating', 'The deployment’s desktops are still being created');
}

/** Users of the deployment that have no desktop of it yet, among those the caller may pick. */
export async function missingUsers(ctx: AppContext, d: DeploymentRow, owner: UserRow, agent: UserRow) {
  const users = await selectedUsers(ctx.db, choosersOf(chooserOf(owner), chooserOf(agent)), d.allowed);
  const have = new Set((await desktopsOf(ctx.db, [d.id])).map((r) => r.userId));
  return users.filter((u) => !have.has(u.id));
}

/** Starts the job that makes the desktops of these users (progress live to owner and co-owners). */
export async function enqueueCreation(ctx: AppContext, events: DeploymentEvents, d: DeploymentRow, agentId: string, userIds: string[]) {
  if (userIds.length === 0) return;
  await ctx.jobs.enqueue(DEPLOYMENT_JOB, { userId: agentId, targetId: d.id, params: { userIds, created: 0, failed: 0 } satisfies JobParams });
  events.creating(d, 'creating_desktops', { deployment_id: d.id, created: 0, failed: 0, total: userIds.length });
}

/**
 * POST /deployments: checks who it is for (at least one user or group, all known, within the
 * owner's scope), the template (one the caller may use), the make (viewers, networks, GPU,
 * hardware within the quota) and the quota (one more deployment, room for its desktops); then the
 * record, and a persisted job that makes one thin overlay desktop per user.
 */
export async function createDeployment(ctx: AppContext, events: DeploymentEvents, user: UserRow, body: z.infer<typeof ZNewDeployment>) {
  const { db } = ctx;
  const allowed: DeploymentAllowed = { groups: body.allowed.groups, users: body.allowed.users };
  assertHasUsers(allowed);
  const template = await usableTemplate(ctx, user, body.template_id);
  await assertChoosable(db, [chooserOf(user)], allowed);
  await assertKnownVgpus(ctx, body.hardware);
  const users = await selectedUsers(db, [chooserOf(user)], allowed);
  if (users.length === 0) throw badRequest('deployment_no_users', 'No user belongs to the chosen groups');
  const { quota } = await hardwareBounds(db, user);
  const createDict = makeCreateDict(template.id, template, body, quota, 'create');
  assertGuestNetworkChoice(ctx.engine.network, null, createDict.hardware.interfaces.map((i) => i.id));
  await checkNewDeploymentQuota(db, user, users.length);
  const id = body.id ?? randomUUID();
  if (await findDeployment(db, id)) throw conflict('conflict', 'A deployment with this id exists');

  const [row] = await db
    .insert(schema.deployments)
    .values({
      id,
      name: body.name,
      description: body.description,
      desktopName: body.desktop_name,
      userId: user.id,
      categoryId: user.categoryId,
      groupId: user.groupId,
      templateId: template.id,
      coOwners: [],
      allowed: storedAllowed(allowed),
      visible: body.visible,
      userPermissions: body.user_permissions,
      createDict,
    })
    .returning();
  await events.added(row!);
  await enqueueCreation(ctx, events, row!, user.id, users.map((u) => u.id));
  return { id };
}

/**
 * PUT /deployments/{id}: the desktops of users that lack one (deleted, or new members of a group),
 * only for users the caller may pick (a co-owner recreates within their own category).
 */
export async function recreateDeployment(ctx: AppContext, events: DeploymentEvents, d: DeploymentRow, agent: UserRow) {
  await assertNotCreating(ctx, d.id);
  const template = await findDomain(ctx.db, d.templateId);
  if (!template || template.kind !== 'template') throw notFound('template_not_found', 'The deployment’s template no longer exists');
  const owner = await ownerRowOf(ctx, d);
  const missing = await missingUsers(ctx, d, owner, agent);
  await checkMoreDeploymentDesktops(ctx.db, owner, missing.length);
  await enqueueCreation(ctx, events, d, agent.id, missing.map((u) => u.id));
  return { id: d.id, missing: missing.length };
}

/**
 * The creation job: one desktop per user, a few at a time, skipping users that already have one
 * (so that a restart resumes where it was). A failure for one user is counted and the rest go on;
 * each desktop appears live to its student (when visible) and to the owner and co-owners.
 */
export function deploymentJobHandler(ctx: AppContext, events: DeploymentEvents): JobHandler {
  return {
    kind: DEPLOYMENT_JOB,
    resumable: true,
    async run(jc) {
      const { db, log } = ctx;
      const params = jc.job.params as JobParams;
      const d = await findDeployment(db, jc.job.targetId);
      if (!d || d.status !== 'ready') return;
      const template = await findDomain(db, d.templateId);
      if (!template) throw new Error('the deployment’s template is gone');
      const [base] = await disksOf(db, template.id);
      if (!base) throw new Error('the deployment’s template has no disk');
      const total = params.userIds.length;
      // Desktops of a chunk cut short by the death of the process that ran this job (taken over
      // here, server/src/jobs/runner.ts): undone, records and partial files, and made again below.
      const desktops = await desktopsOf(db, [d.id]);
      for (const r of desktops) if (r.status === CREATING_DESKTOP) await undoCreation(db, ctx.engine.disks, r.id);
      const have = new Set(desktops.filter((r) => r.status !== CREATING_DESKTOP).map((r) => r.userId));
      const users = new Map(
        (await db.select().from(schema.users).where(inArray(schema.users.id, params.userIds.length ? params.userIds : ['']))).map((u) => [u.id, u]),
      );
      let created = 0;
      let failed = 0;
      // Files made in the chunk under way, before its desktops are marked ready (progress counts them).
      let filesMade = 0;
      // What the desktops are made of, read again with each progress report (an edit meanwhile applies to the rest).
      let current = d;
      // Desktops made since the last report: their live events go out together, built from the rows just written.
      let made: DomainRow[] = [];
      const progress = createThrottle(async () => {
        try {
          // The counts first, at the moment the throttle allows; then what takes the database.
          events.creating(current, 'creating_desktops', { deployment_id: d.id, created: created + filesMade, failed, total });
          const rows = made;
          made = [];
          current = (await findDeployment(db, d.id)) ?? current;
          if (rows.length) await events.desktopsAdded(current, rows);
          await jc.progress(((created + filesMade + failed) / Math.max(1, total)) * 100, { created, failed });
        } catch (err) {
          log.warn({ err, deployment: d.id }, 'deployment progress not published');
        }
      });
      // Users in chunks: one transaction of records per chunk, its files CREATE_CONCURRENCY at a
      // time (the engine's programs run as child processes), then one update marks the chunk's desktops ready.
      const todo: UserRow[] = [];
      for (const userId of params.userIds) {
        const student = users.get(userId);
        if (have.has(userId)) created++;
        else if (!student) failed++;
        else todo.push(student);
      }
      if (created + failed > 0) progress.touch();
      for (let at = 0; at < todo.length; at += CREATE_CHUNK) {
        if (jc.signal.aborted) throw new Error('aborted');
        const plans = todo.slice(at, at + CREATE_CHUNK).map((student) =>
          planDesktopFromTemplate(ctx.engine, template, student, base, {
            name: current.desktopName,
            description: current.description,
            persistent: true,
            hardware: current.createDict.hardware,
            guestProperties: current.createDict.guestProperties,
            image: current.createDict.image,
            tag: d.id,
            // Whether its student sees it is the deployment's at the moment the row is written.
            tagVisible: sql`(select ${schema.deployments.visible} from ${schema.deployments} where ${schema.deployments.id} = ${d.id})`,
          }),
        );
        const result = await createPlannedDesktops(db, ctx.engine.disks, plans, 'Stopped', base, (each) =>
          pool(plans, CREATE_CONCURRENCY, async (plan) => {
            // Optional pause before each desktop (demos and tests, to watch the progress).
            if (ctx.config.diskOperationDelayMs > 0) await sleep(ctx.config.diskOperationDelayMs, undefined, { signal: jc.signal }).catch(() => undefined);
            if (jc.signal.aborted) throw new Error('aborted');
            if (await each(plan)) filesMade++;
            progress.touch();
          }),
        );
        for (const f of result.failed) log.warn({ err: f.err, deployment: d.id, user: f.plan.domain.userId }, 'deployment desktop not created');
        failed += result.failed.length;
        created += result.rows.length;
        filesMade = 0;
        for (const r of result.rows) have.add(r.userId);
        made.push(...result.rows);
        progress.touch();
      }
      await progress.flush();
      if (failed > 0 && created === 0) throw new Error(`no desktop could be created (${failed} failed)`);
    },
    async finished(job) {
      const d = await findDeployment(ctx.db, job.targetId);
      if (!d) return;
      const p = job.params as JobParams;
      events.creating(d, 'end_creating_desktops', { deployment_id: d.id, created: p.created ?? 0, failed: p.failed ?? 0, total: p.userIds.length });
      if (d.status === 'ready') await events.updated(d);
    },
  };
}
