import { eq, inArray } from 'drizzle-orm';
import type { ServerToClientEvents, TCreatingDesktopsEvent } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { actorOf } from '../../auth/caller';
import type { DesktopLifecycle } from '../desktops/lifecycle';
import type { DomainRow } from '../shared/domains';
import { findDeployment, reachesDesktop, rightsOn, type DeploymentRow } from './access';
import { deploymentDesktopViews, deploymentViews } from './view';

const UPDATE_DEBOUNCE_MS = 250;

/** Who hears a deployment's events: its owner and co-owners (reference §3). */
export const audienceOf = (d: Pick<DeploymentRow, 'userId' | 'coOwners'>) => [...new Set([d.userId, ...d.coOwners])];

async function actorsOf(ctx: AppContext, ids: string[]) {
  const users = ids.length ? await ctx.db.select().from(schema.users).where(inArray(schema.users.id, ids)) : [];
  return Promise.all(users.map((u) => actorOf(ctx.db, u)));
}

/**
 * The deployment (without desktops) to each listener, as they see it: the view is built once,
 * only the listener's rights on it (is_owner, can_delete, can_change_owners) differ.
 */
export async function publishDeployment(
  ctx: AppContext,
  row: DeploymentRow,
  events: ('deployments_add' | 'deployments_update' | 'deployment_update')[],
  to = audienceOf(row),
) {
  const actors = await actorsOf(ctx, to);
  if (actors.length === 0) return;
  const [view] = await deploymentViews(ctx, [row], actors[0]!);
  for (const actor of actors) {
    const rights = rightsOn(actor, row);
    const theirs = { ...view!, is_owner: rights.owner, can_delete: rights.delete, can_change_owners: rights.changeOwners };
    for (const e of events) ctx.bus.toUser(actor.id, e, theirs);
  }
}

/**
 * Live events of deployments: `deployments_add|update|delete` and `deployment_update|delete` (the
 * deployment, as each listener sees it), `deploymentdesktop_add|update|delete` (its desktops),
 * `creating_desktops` / `end_creating_desktops` (creation progress), to the owner and co-owners.
 */
export function createDeploymentEvents(ctx: AppContext, lifecycle: DesktopLifecycle) {
  const { bus, db, log } = ctx;
  const timers = new Map<string, NodeJS.Timeout>();

  const deployment = (row: DeploymentRow, events: Parameters<typeof publishDeployment>[2], to?: string[]) => publishDeployment(ctx, row, events, to);

  const updated = (row: DeploymentRow) => deployment(row, ['deployments_update', 'deployment_update']);

  /** Counts changed (a desktop started, stopped…): one update per deployment per quarter second. */
  function countsChanged(deploymentId: string) {
    if (timers.has(deploymentId)) return;
    timers.set(
      deploymentId,
      setTimeout(() => {
        timers.delete(deploymentId);
        void findDeployment(db, deploymentId)
          .then((row) => (row && row.status === 'ready' ? updated(row) : undefined))
          .catch((err) => log.warn({ err, deployment: deploymentId }, 'deployment update event failed'));
      }, UPDATE_DEBOUNCE_MS).unref(),
    );
  }

  function removed(row: Pick<DeploymentRow, 'id' | 'userId' | 'coOwners'>, to = audienceOf(row)) {
    for (const id of to) {
      bus.toUser(id, 'deployments_delete', { id: row.id });
      bus.toUser(id, 'deployment_delete', { id: row.id });
    }
  }

  /**
   * A desktop's changes go out one after another, each built from the desktop as it is when its
   * turn comes (not from the row that was changed): an event begun before a later change (a state
   * of the engine's, then the teacher's visibility switch) can then never arrive after it and
   * undo it on the screens.
   */
  const desktopTurns = new Map<string, Promise<void>>();
  function desktop(changed: DomainRow, event: 'deploymentdesktop_add' | 'deploymentdesktop_update') {
    if (!changed.tag) return Promise.resolve();
    const turn = (desktopTurns.get(changed.id) ?? Promise.resolve()).then(async () => {
      const [row] = await db.select().from(schema.domains).where(eq(schema.domains.id, changed.id));
      if (row) await desktopNow(row, event);
    });
    const settled = turn.catch(() => undefined);
    desktopTurns.set(changed.id, settled);
    void settled.then(() => {
      if (desktopTurns.get(changed.id) === settled) desktopTurns.delete(changed.id);
    });
    return turn;
  }

  async function desktopNow(row: DomainRow, event: 'deploymentdesktop_add' | 'deploymentdesktop_update') {
    if (!row.tag) return;
    const d = await findDeployment(db, row.tag);
    if (!d || d.status !== 'ready') return;
    const [view] = await deploymentDesktopViews(ctx, [row]);
    // Only to those who reach it (a co-owner: desktops of users of their own category).
    const audience = audienceOf(d);
    const listeners = await db.select().from(schema.users).where(inArray(schema.users.id, audience));
    for (const u of listeners) {
      if (reachesDesktop({ id: u.id, role: u.roleId, categoryId: u.categoryId, groupIds: [] }, d, row)) bus.toUser(u.id, event, view!);
    }
    countsChanged(d.id);
  }

  /**
   * Desktops a creation job has just made: built into views once, in one batch, from the rows
   * just written; each student hears `desktop_add` for their own (when visible), the owner and
   * co-owners `deploymentdesktop_add` for those they reach.
   */
  async function desktopsAdded(d: DeploymentRow, rows: DomainRow[]) {
    if (rows.length === 0) return;
    const [views, listeners] = await Promise.all([
      deploymentDesktopViews(ctx, rows),
      db.select().from(schema.users).where(inArray(schema.users.id, audienceOf(d))),
    ]);
    for (const [i, view] of views.entries()) {
      const row = rows[i]!;
      if (row.tagVisible) {
        const { viewer: _viewer, user_photo: _photo, deployment_id: _deployment, ...desktop } = view;
        bus.toUser(row.userId, 'desktop_add', desktop);
      }
      for (const u of listeners) {
        if (d.status === 'ready' && reachesDesktop({ id: u.id, role: u.roleId, categoryId: u.categoryId, groupIds: [] }, d, row)) bus.toUser(u.id, 'deploymentdesktop_add', view);
      }
    }
    countsChanged(d.id);
  }

  async function desktopGone(row: DomainRow) {
    if (!row.tag) return;
    const d = await findDeployment(db, row.tag);
    if (!d) return;
    for (const id of audienceOf(d)) bus.toUser(id, 'deploymentdesktop_delete', { id: row.id, deployment_id: d.id });
    if (d.status === 'ready') countsChanged(d.id);
  }

  function creating(d: Pick<DeploymentRow, 'userId' | 'coOwners'>, event: 'creating_desktops' | 'end_creating_desktops', payload: TCreatingDesktopsEvent) {
    for (const id of audienceOf(d)) bus.toUser(id, event, payload as ServerToClientEvents[typeof event]);
  }

  const onChanged = (row: DomainRow) => void desktop(row, 'deploymentdesktop_update').catch((err) => log.warn({ err }, 'deployment desktop event failed'));
  const onDeleted = (row: DomainRow) => void desktopGone(row).catch((err) => log.warn({ err }, 'deployment desktop event failed'));
  lifecycle.changes.on('changed', onChanged);
  lifecycle.changes.on('deleted', onDeleted);

  return {
    added: (row: DeploymentRow, to?: string[]) => deployment(row, ['deployments_add'], to),
    updated,
    removed,
    desktop,
    desktopsAdded,
    desktopGone,
    countsChanged,
    creating,
    close() {
      lifecycle.changes.off('changed', onChanged);
      lifecycle.changes.off('deleted', onDeleted);
      for (const t of timers.values()) clearTimeout(t);
    },
  };
}
export type DeploymentEvents = ReturnType<typeof createDeploymentEvents>;
