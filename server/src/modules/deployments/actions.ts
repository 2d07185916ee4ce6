import { and, eq, gt, inArray } from 'drizzle-orm';
import type { z } from 'zod';
import { AT_REST, ON_HYPERVISOR, STARTABLE, statusIn, type ZDeploymentUpdate } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { UserRow } from '../../auth/sessions';
import { ApiError, badRequest, precondition } from '../../http/errors';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import type { EventCause } from '../desktops/events';
import type { DomainRow } from '../shared/domains';
import { currentDesktopViews } from '../shared/desktop-view';
import { hardwareBounds } from '../domains/hardware';
import { dropItemBookings } from '../bookings/service';
import { recycleDomains } from '../recycle-bin/recycle';
import { reachesDesktop, type DeploymentRow } from './access';
import type { Actor } from '../../auth/caller';
import { assertKnownVgpus, assertNotCreating, enqueueCreation, ownerRowOf } from './create';
import type { DeploymentEvents } from './events';
import { checkMoreDeploymentDesktops, startAllowance } from './quota';
import { assertHasUsers, makeCreateDict, remadeHardware } from './rules';
import { assertGuestNetworkChoice } from '../domains/guest';
import { beyondReach, choosersOf, selectedUsers, storedAllowed, withBeyond, type DeploymentAllowed } from './users';
import { assertChoosable, chooserOf, mayChoose } from '../access/permissions';
import { hasDeploymentRole } from './roles';
import { desktopsOf } from './view';

/** Deleting or remaking desktops needs them off (error `deployment_stop`, 428). */
function assertAllStopped(desktops: DomainRow[], action: string) {
  const on = desktops.filter((r) => !statusIn(AT_REST, r.status));
  if (on.length > 0) throw precondition('deployment_stop', `Stop all the desktops before you ${action}`, { running: on.length });
}

/** A deployment with a booking to come (or in progress) keeps its make and its users: the booking counts on them. */
async function assertNotBooked(ctx: AppContext, d: DeploymentRow) {
  const [booking] = await ctx.db
    .select({ id: schema.bookings.id })
    .from(schema.bookings)
    .where(and(eq(schema.bookings.itemType, 'deployment'), eq(schema.bookings.itemId, d.id), gt(schema.bookings.end, ctx.clock.now())))
    .limit(1);
  if (booking) throw precondition('cant_edit_booked_deployment', 'The deployment has bookings: delete them before changing its desktops or users');
}

/** Desktops shown to (or hidden from) their users: desktop_add or desktop_delete on their lists, live. */
async function showToUser(ctx: AppContext, rows: Pick<DomainRow, 'id' | 'userId'>[], visible: boolean) {
  if (visible) for (const view of await currentDesktopViews(ctx, rows.map((r) => r.id))) ctx.bus.toUser(view.user, 'desktop_add', view);
  else for (const r of rows) ctx.bus.toUser(r.userId, 'desktop_delete', { id: r.id });
}

/** Force-stops whatever runs (a queued start is cancelled). */
async function stopAll(lifecycle: DesktopLifecycle, rows: DomainRow[], cause: EventCause) {
  for (const r of rows) {
    if (r.status === 'Starting') await lifecycle.stop(r, cause).catch(() => undefined);
    else if (statusIn(ON_HYPERVISOR, r.status)) await lifecycle.forceStop(r.id, cause);
  }
}

/**
 * PUT /deployments/visible/{id}: toggles whether the students see their desktops (they appear
 * and disappear live); when hiding, `stop_started_domains` force-stops the running ones.
 */
export async function toggleVisible(ctx: AppContext, lifecycle: DesktopLifecycle, events: DeploymentEvents, d: DeploymentRow, stopStarted: boolean, cause: EventCause = {}) {
  const visible = !d.visible;
  const [row] = await ctx.db.update(schema.deployments).set({ visible }).where(eq(schema.deployments.id, d.id)).returning();
  const changed = await ctx.db
    .update(schema.domains)
    .set({ tagVisible: visible })
    .where(and(eq(schema.domains.tag, d.id), eq(schema.domains.tagVisible, !visible)))
    // Only who changed: the views are read whole after (one query), not parsed twice.
    .returning({ id: schema.domains.id, userId: schema.domains.userId });
  await showToUser(ctx, changed, visible);
  if (!visible && stopStarted) await stopAll(lifecycle, await desktopsOf(ctx.db, [d.id]), cause);
  await events.updated(row!);
  return { id: d.id, visible };
}

/** PUT /deployments/domain/visible/{desktop_id}: one desktop shown to or hidden from its user. */
export async function setDesktopVisible(ctx: AppContext, events: DeploymentEvents, desktop: DomainRow, visible: boolean) {
  if (desktop.tagVisible === visible) return { id: desktop.id, visible };
  const [row] = await ctx.db.update(schema.domains).set({ tagVisible: visible }).where(eq(schema.domains.id, desktop.id)).returning();
  await showToUser(ctx, [row!], visible);
  await events.desktop(row!, 'deploymentdesktop_update');
  return { id: desktop.id, visible };
}

/** PUT /deployments/start/{id}: every stopped desktop through the start queue, within the owner's quota of started deployment desktops. */
export async function startDeployment(ctx: AppContext, lifecycle: DesktopLifecycle, d: DeploymentRow, agent: UserRow, actor: Actor) {
  const owner = await ownerRowOf(ctx, d);
  let left = await startAllowance(ctx.db, owner);
  const rows = (await desktopsOf(ctx.db, [d.id])).filter((r) => statusIn(STARTABLE, r.status) && reachesDesktop(actor, d, r));
  const users = rows.length ? await ctx.db.select().from(schema.users).where(inArray(schema.users.id, rows.map((r) => r.userId))) : [];
  let started = 0;
  let refusal: unknown;
  for (const r of rows) {
    if (left <= 0) break;
    const student = users.find((u) => u.id === r.userId);
    if (!student) continue;
    try {
      await lifecycle.start(r, student, agent);
      left--;
      started++;
    } catch (err) {
      refusal ??= err;
      ctx.log.info({ err, desktop: r.id }, 'deployment start: desktop not started');
    }
  }
  // None could start (no booking, no room…): the first reason, so that the person knows why.
  if (started === 0 && refusal instanceof ApiError) throw refusal;
  return {};
}

/** PUT /deployments/stop/{id}: a force stop of every desktop (the caller may reach). */
export async function stopDeployment(ctx: AppContext, lifecycle: DesktopLifecycle, d: DeploymentRow, actor: Actor, cause: EventCause = {}) {
  await stopAll(lifecycle, (await desktopsOf(ctx.db, [d.id])).filter((r) => reachesDesktop(actor, d, r)), cause);
  return {};
}

/**
 * DELETE /deployments/{id}[/permanent]: with all its desktops stopped, into the owner's recycle
 * bin as one entry (restorable), or for good with the disks.
 */
export async function deleteDeployment(ctx: AppContext, events: DeploymentEvents, d: DeploymentRow, agent: UserRow, permanent: boolean) {
  await assertNotCreating(ctx, d.id);
  const desktops = await desktopsOf(ctx.db, [d.id]);
  assertAllStopped(desktops, 'delete the deployment');
  const owner = await ownerRowOf(ctx, d);
  const result = await recycleDomains(ctx, {
    agent,
    owner,
    itemType: 'deployment',
    itemName: d.name,
    desktops,
    templates: [],
    deployments: [d as unknown as Record<string, unknown>],
    permanent,
  });
  // Its bookings go now, in either case: their units must not stay taken in the calendars.
  await dropItemBookings(ctx, 'deployment', d.id);
  if (result.permanent) await ctx.db.delete(schema.deployments).where(eq(schema.deployments.id, d.id));
  else await ctx.db.update(schema.deployments).set({ status: 'recycled' }).where(eq(schema.deployments.id, d.id));
  events.removed(d);
  return {};
}

/**
 * PUT /deployment/{id}: names, description, students' rights, and what the desktops are made of.
 * A new make (hardware, viewers, cover) is applied to every desktop, so they must be stopped.
 */
export async function editDeployment(ctx: AppContext, lifecycle: DesktopLifecycle, events: DeploymentEvents, d: DeploymentRow, agent: UserRow, body: z.infer<typeof ZDeploymentUpdate>) {
  const { db } = ctx;
  const remake = body.hardware !== undefined || body.guest_properties !== undefined || body.image !== undefined;
  const desktops = await desktopsOf(db, [d.id]);
  let createDict = d.createDict;
  if (remake) {
    await assertNotCreating(ctx, d.id);
    await assertNotBooked(ctx, d);
    assertAllStopped(desktops, 'change the desktops');
    await assertKnownVgpus(ctx, body.hardware);
    // Within the owner's quota and the caller's (a co-owner chooses no more than they could for themselves).
    const [own, mine] = await Promise.all([hardwareBounds(db, await ownerRowOf(ctx, d)), hardwareBounds(db, agent)]);
    const quota = { memory: Math.min(own.quota.memory, mine.quota.memory), vcpus: Math.min(own.quota.vcpus, mine.quota.vcpus), desktops_disk_size: Math.min(own.quota.desktops_disk_size, mine.quota.desktops_disk_size) };
    createDict = makeCreateDict(d.templateId, d.createDict, body, quota, 'edit');
    assertGuestNetworkChoice(ctx.engine.network, d.createDict.hardware.interfaces.map((i) => i.id), createDict.hardware.interfaces.map((i) => i.id));
  }
  const [row] = await db
    .update(schema.deployments)
    .set({
      name: body.name ?? d.name,
      description: body.description ?? d.description,
      desktopName: body.desktop_name ?? d.desktopName,
      userPermissions: body.user_permissions ?? d.userPermissions,
      createDict,
    })
    .where(eq(schema.deployments.id, d.id))
    .returning();
  for (const desktop of desktops) {
    const set: Partial<DomainRow> = { name: row!.desktopName, description: row!.description };
    if (remake) Object.assign(set, { hardware: remadeHardware(desktop.hardware, createDict.hardware), guestProperties: createDict.guestProperties, image: createDict.image });
    const [updated] = await db.update(schema.domains).set(set).where(eq(schema.domains.id, desktop.id)).returning();
    if (updated) await lifecycle.publish(updated);
  }
  await events.updated(row!);
  return row!;
}

/**
 * PUT /deployment/users/{id}: new users and groups. New users get their desktop (the creation
 * job); users no longer chosen lose theirs, into the owner's recycle bin (restorable) — they must
 * be stopped first (`deployment_stop`).
 */
export async function editDeploymentUsers(ctx: AppContext, events: DeploymentEvents, d: DeploymentRow, agent: UserRow, input: DeploymentAllowed) {
  const { db } = ctx;
  assertHasUsers(input);
  await assertNotCreating(ctx, d.id);
  await assertNotBooked(ctx, d);
  const owner = await ownerRowOf(ctx, d);
  // Only users and groups both the owner and the caller may pick (a co-owner: their own category).
  const caller = chooserOf(agent);
  const choosers = choosersOf(chooserOf(owner), caller);
  await assertChoosable(db, choosers, input);
  // What someone of a wider reach (the owner, an admin) chose beyond the caller's stays as it is:
  // those names are kept in the list and their desktops are neither made nor removed.
  const beyond = await beyondReach(db, caller, d.allowed);
  const users = await selectedUsers(db, choosers, input);
  if (users.length === 0 && beyond.groups.length + beyond.users.length === 0) throw badRequest('deployment_no_users', 'No user belongs to the chosen groups');
  const keep = new Set(users.map((u) => u.id));
  const desktops = await desktopsOf(db, [d.id]);
  const gone = desktops.filter((r) => !keep.has(r.userId) && mayChoose(caller, r));
  assertAllStopped(gone, 'remove their users');
  const have = new Set(desktops.map((r) => r.userId));
  const added = users.filter((u) => !have.has(u.id));
  await checkMoreDeploymentDesktops(db, owner, added.length - gone.length);
  const allowed = storedAllowed(withBeyond(input, beyond));
  const [row] = await db.update(schema.deployments).set({ allowed }).where(eq(schema.deployments.id, d.id)).returning();
  if (gone.length > 0) {
    await recycleDomains(ctx, { agent, owner, itemType: 'bulk', itemName: `${d.name} · ${d.desktopName}`, desktops: gone, templates: [] });
    for (const r of gone) await events.desktopGone(r);
  }
  await events.updated(row!);
  await enqueueCreation(ctx, events, row!, agent.id, added.map((u) => u.id));
  return { id: d.id, added: added.length, removed: gone.length };
}

/**
 * PUT /deployment/co-owners/{id}: people who manage the deployment with the owner — existing
 * users of a role that may have deployments, whom both the owner and the caller may pick.
 */
export async function setCoOwners(ctx: AppContext, events: DeploymentEvents, d: DeploymentRow, agent: UserRow, ids: string[]) {
  const { db } = ctx;
  const owner = await ownerRowOf(ctx, d);
  const wanted = [...new Set(ids)].filter((id) => id !== d.userId);
  const found = wanted.length ? await db.select().from(schema.users).where(inArray(schema.users.id, wanted)) : [];
  for (const id of wanted) {
    const u = found.find((f) => f.id === id);
    const choosers = choosersOf(chooserOf(owner), chooserOf(agent));
    // Out of reach is answered as unknown: the caller may not learn who exists elsewhere.
    if (!u || !choosers.every((c) => mayChoose(c, u))) throw badRequest('user_not_found', `Unknown user ${id}`, { user: id });
    if (!hasDeploymentRole(u.roleId)) {
      throw badRequest('bad_request', `${u.username} cannot co-own deployments`, { user: id });
    }
  }
  const [row] = await db.update(schema.deployments).set({ coOwners: wanted }).where(eq(schema.deployments.id, d.id)).returning();
  const before = new Set(d.coOwners);
  const left = d.coOwners.filter((id) => !wanted.includes(id));
  events.removed(d, left);
  await events.added(row!, wanted.filter((id) => !before.has(id)));
  await events.updated(row!);
  return row!;
}
