import type { TCreatingDesktopsEvent, TDeployment, TDeploymentDesktop, TDeploymentDetail } from '@vdi/contracts';
import { desktopState } from '@vdi/contracts';

/** The list's order, as the reference sorts it: by name, case-insensitive. */
const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' });

export function upsertDeployment(list: TDeployment[] | undefined, d: TDeployment): TDeployment[] {
  const l = list ?? [];
  const i = l.findIndex((x) => x.id === d.id);
  const next = i >= 0 ? l.map((x, j) => (j === i ? { ...x, ...d } : x)) : [...l, d];
  return next.sort(byName);
}

export const removeDeployment = (list: TDeployment[] | undefined, id: string) => (list ?? []).filter((x) => x.id !== id);

/**
 * A long list read page by page (`page`/`per_page` of the list calls), so that no single answer
 * holds hundreds of items: pages are asked until one comes back short. `fetchPage` answers the
 * page's items and whatever else the answer carries (kept from the first page).
 */
export async function readPaged<T extends { id: string }, R extends { items: T[] }>(
  fetchPage: (page: number) => Promise<R>,
  perPage: number,
  maxPages = 1000,
): Promise<R> {
  const first = await fetchPage(1);
  const items = [...first.items];
  const seen = new Set(items.map((x) => x.id));
  for (let page = 2, last = first.items; last.length === perPage && page <= maxPages; page++) {
    last = (await fetchPage(page)).items;
    // A page shifted by a desktop added meanwhile repeats one: kept once.
    for (const x of last) if (!seen.has(x.id)) (seen.add(x.id), items.push(x));
  }
  return { ...first, items };
}

/**
 * A deployment shown or hidden: every one of its desktops follows (the server sets them all), so
 * that the lines and the counts never disagree until the detail is read again.
 */
export const withVisibility = (detail: TDeploymentDetail, visible: boolean): TDeploymentDetail =>
  detail.visible === visible && detail.desktops.every((x) => x.visible === visible)
    ? detail
    : { ...detail, visible, visibleDesktops: visible ? detail.totalDesktops : 0, desktops: detail.desktops.map((x) => (x.visible === visible ? x : { ...x, visible })) };

/** A deployment event for the detail: its fields change, its desktops stay (or follow a change of its visibility). */
export function mergeDetail(detail: TDeploymentDetail | undefined, d: TDeployment): TDeploymentDetail | undefined {
  if (!detail || detail.id !== d.id) return detail;
  // The event's own fields (its counts) are the server's; the desktops follow its visibility.
  return { ...detail, ...d, desktops: d.visible === detail.visible ? detail.desktops : withVisibility(detail, d.visible).desktops };
}

export function upsertDesktop(detail: TDeploymentDetail | undefined, d: TDeploymentDesktop): TDeploymentDetail | undefined {
  if (!detail || detail.id !== d.deployment_id) return detail;
  const i = detail.desktops.findIndex((x) => x.id === d.id);
  const desktops = i >= 0 ? detail.desktops.map((x, j) => (j === i ? { ...x, ...d } : x)) : [...detail.desktops, d];
  return { ...detail, desktops };
}

export function removeDesktop(detail: TDeploymentDetail | undefined, ev: { id: string; deployment_id: string }): TDeploymentDetail | undefined {
  if (!detail || detail.id !== ev.deployment_id) return detail;
  return { ...detail, desktops: detail.desktops.filter((x) => x.id !== ev.id) };
}

/** creating_desktops carries the progress; end_creating_desktops ends it (null). */
export function withCreation<T extends TDeployment>(d: T, ev: TCreatingDesktopsEvent, ended: boolean): T {
  if (d.id !== ev.deployment_id) return d;
  return { ...d, creation: ended ? null : { created: ev.created, failed: ev.failed, total: ev.total } };
}

export const creationPercent = (c: { created: number; failed: number; total: number } | null) =>
  !c || c.total === 0 ? 0 : Math.min(100, Math.round(((c.created + c.failed) / c.total) * 100));

export const isStarted = (d: Pick<TDeploymentDesktop, 'state'>) => {
  const s = desktopState(d.state);
  return s === 'started' || s === 'waitingip';
};

export type UserDesktops = { user: string; userName: string; groupName: string; photo: string; desktops: TDeploymentDesktop[] };

/** The deployment's desktops, one group per user, sorted by the user's name. */
export function groupByUser(desktops: readonly TDeploymentDesktop[]): UserDesktops[] {
  const groups = new Map<string, UserDesktops>();
  for (const d of desktops) {
    const g = groups.get(d.user) ?? { user: d.user, userName: d.user_name ?? d.user, groupName: d.group_name ?? '', photo: d.user_photo, desktops: [] };
    g.desktops.push(d);
    groups.set(d.user, g);
  }
  return [...groups.values()].sort((a, b) => a.userName.localeCompare(b.userName, undefined, { sensitivity: 'base' }));
}

/** Filters the desktops by a typed text over user, group and desktop names. */
export function matchesFilter(g: UserDesktops, text: string) {
  const q = text.trim().toLowerCase();
  if (!q) return true;
  return `${g.userName} ${g.groupName} ${g.desktops.map((d) => d.name).join(' ')}`.toLowerCase().includes(q);
}

/** A deployment with a GPU profile is booked as a whole, in its calendar. */
export const deploymentBookingPath = (id: string) => `/booking/deployment/${encodeURIComponent(id)}`;
