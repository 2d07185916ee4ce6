import { describe, expect, it } from 'vitest';
import type { TDeployment, TDeploymentDesktop, TDeploymentDetail } from '@vdi/contracts';
import { readPaged, creationPercent, groupByUser, isStarted, matchesFilter, mergeDetail, removeDesktop, upsertDeployment, upsertDesktop, withCreation } from './logic';

const dep = (over: Partial<TDeployment> = {}): TDeployment =>
  ({ id: 'd1', name: 'Lab', description: '', user: 'u', user_name: 'Teo', co_owners: [], visible: true, template: 'Demo', desktop_name: 'Lab desktop', totalDesktops: 2, visibleDesktops: 2, startedDesktops: 0, creatingDesktops: 0, creation: null, ...over }) as TDeployment;
const desk = (over: Partial<TDeploymentDesktop> = {}): TDeploymentDesktop =>
  ({ id: 'x1', name: 'Lab desktop', state: 'Stopped', user: 's1', user_name: 'Sara', group_name: 'Students 1A', user_photo: '', deployment_id: 'd1', visible: true, ...over }) as TDeploymentDesktop;

describe('deployments list', () => {
  it('adds, updates and keeps the list sorted by name, case-insensitive', () => {
    let l = upsertDeployment(undefined, dep({ id: 'b', name: 'beta' }));
    l = upsertDeployment(l, dep({ id: 'a', name: 'Alpha' }));
    expect(l.map((d) => d.id)).toEqual(['a', 'b']);
    l = upsertDeployment(l, dep({ id: 'a', name: 'Alpha', startedDesktops: 2 }));
    expect(l).toHaveLength(2);
    expect(l[0]!.startedDesktops).toBe(2);
  });

  it('merges a deployment event into the open detail and keeps its desktops', () => {
    const detail = { ...dep(), desktops: [desk()] } as TDeploymentDetail;
    const merged = mergeDetail(detail, dep({ visible: false }))!;
    expect(merged.visible).toBe(false);
    expect(merged.desktops).toHaveLength(1);
    expect(mergeDetail(detail, dep({ id: 'other' }))).toBe(detail);
  });

  it('shows or hides every desktop of the deployment with it, so that its switches and counts agree at once', () => {
    const hidden = { ...dep({ visible: false, visibleDesktops: 0 }), desktops: [desk({ visible: false }), desk({ id: 'x2', visible: false })] } as TDeploymentDetail;
    const shown = mergeDetail(hidden, dep({ visible: true, visibleDesktops: 2 }))!;
    expect(shown.desktops.map((d) => d.visible)).toEqual([true, true]);
    // An event that does not change the visibility leaves each desktop's own choice alone.
    const one = { ...shown, desktops: [desk({ visible: false }), desk({ id: 'x2' })] } as TDeploymentDetail;
    expect(mergeDetail(one, dep({ visible: true, startedDesktops: 1 }))!.desktops.map((d) => d.visible)).toEqual([false, true]);
  });
});

describe('deployment desktops', () => {
  const detail = { ...dep(), desktops: [desk()] } as TDeploymentDetail;
  it('applies deploymentdesktop add, update and delete to its deployment only', () => {
    const added = upsertDesktop(detail, desk({ id: 'x2', user: 's2', user_name: 'Pau' }))!;
    expect(added.desktops).toHaveLength(2);
    const updated = upsertDesktop(added, desk({ state: 'Started' }))!;
    expect(updated.desktops.find((d) => d.id === 'x1')!.state).toBe('Started');
    expect(upsertDesktop(detail, desk({ id: 'x9', deployment_id: 'other' }))).toBe(detail);
    expect(removeDesktop(updated, { id: 'x2', deployment_id: 'd1' })!.desktops).toHaveLength(1);
  });

  it('groups desktops per user, sorted by name, and filters them', () => {
    const groups = groupByUser([desk({ id: 'a', user: 's2', user_name: 'pau' }), desk({ id: 'b' }), desk({ id: 'c', user: 's2', user_name: 'pau' })]);
    expect(groups.map((g) => [g.userName, g.desktops.length])).toEqual([
      ['pau', 2],
      ['Sara', 1],
    ]);
    expect(matchesFilter(groups[1]!, '1a')).toBe(true);
    expect(matchesFilter(groups[1]!, 'pau')).toBe(false);
  });

  it('counts started and waiting-for-IP desktops as running (the videowall shows them)', () => {
    expect(isStarted(desk({ state: 'Started' }))).toBe(true);
    expect(isStarted(desk({ state: 'WaitingIP' }))).toBe(true);
    expect(isStarted(desk({ state: 'Stopped' }))).toBe(false);
    expect(isStarted(desk({ state: 'Starting' }))).toBe(false);
  });
});

describe('creation progress', () => {
  it('follows creating_desktops and ends with end_creating_desktops', () => {
    const d = withCreation(dep(), { deployment_id: 'd1', created: 1, failed: 0, total: 4 }, false);
    expect(d.creation).toEqual({ created: 1, failed: 0, total: 4 });
    expect(creationPercent(d.creation)).toBe(25);
    expect(withCreation(d, { deployment_id: 'd1', created: 4, failed: 0, total: 4 }, true).creation).toBeNull();
    expect(withCreation(d, { deployment_id: 'zz', created: 4, failed: 0, total: 4 }, true)).toBe(d);
    expect(creationPercent(null)).toBe(0);
    expect(creationPercent({ created: 3, failed: 1, total: 4 })).toBe(100);
  });
});

describe('reading a long list page by page', () => {
  const all = Array.from({ length: 23 }, (_, i) => ({ id: `x${i}` }));
  const pageOf = (list: { id: string }[], per: number) => async (n: number) => ({ items: list.slice((n - 1) * per, n * per), page: n });

  it('asks pages until a short one and keeps what the first answer carries', async () => {
    const asked: number[] = [];
    const fetchPage = pageOf(all, 10);
    const got = await readPaged(async (n) => (asked.push(n), fetchPage(n)), 10);
    expect(got.items).toEqual(all);
    expect(got.page).toBe(1);
    expect(asked).toEqual([1, 2, 3]);
  });

  it('asks one more, empty, page when the list fills its last page; keeps a repeated item once', async () => {
    expect((await readPaged(pageOf(all.slice(0, 20), 10), 10)).items).toHaveLength(20);
    // An item added before the second page was read shifts it by one.
    const shifted = [{ id: 'new' }, ...all];
    const got = await readPaged(async (n) => (n === 1 ? pageOf(all, 10)(1) : pageOf(shifted, 10)(n)), 10);
    expect(got.items.map((x) => x.id)).toEqual(all.map((x) => x.id));
  });
});
