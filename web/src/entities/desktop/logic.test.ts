import { beforeEach, describe, expect, it } from 'vitest';
import type { TDesktop } from '@vdi/contracts';
import {
  applyQueue,
  availableViewers,
  chosenViewer,
  filterDesktops,
  formatLocal,
  loadViewMode,
  mergeFetched,
  memoryLabel,
  parseServerDate,
  pruneQueue,
  rememberViewer,
  removeDesktop,
  saveViewMode,
  stateView,
  upsertDesktop,
  withStatus,
} from './logic';

const desk = (over: Partial<TDesktop>): TDesktop =>
  ({
    id: 'd1', name: 'Desktop', description: '', state: 'Stopped', type: 'persistent', template: null, viewers: ['file-spice', 'browser-vnc'],
    icon: 'fa-desktop', image: { id: '1', type: 'stock', url: '' }, ip: null, progress: null, editable: true, scheduled: { shutdown: false },
    server: false, accessed: null, tag: false, visible: true, user: 'u', user_name: null, group: 'g', group_name: null, category: 'c',
    category_name: null, reservables: { vgpus: null }, interfaces: [], current_action: null, storage: [], permissions: [], needs_booking: false,
    next_booking_start: null, next_booking_end: null, booking_id: false, vcpus: 1, memory: 1, ...over,
  }) as TDesktop;

describe('state view', () => {
  it('shows table states by name and anything else as working', () => {
    expect(stateView('Started')).toMatchObject({ shown: 'started', color: 'teal', busy: false });
    expect(stateView('Stopped')).toMatchObject({ shown: 'stopped', busy: false });
    expect(stateView('Starting')).toMatchObject({ shown: 'working', state: 'starting', busy: true });
    expect(stateView('Stopping').shown).toBe('working');
    expect(stateView('CreatingAndStarting')).toMatchObject({ shown: 'working', state: 'creating' });
    expect(stateView('Whatever')).toMatchObject({ shown: 'working', state: 'working' });
    expect(stateView('Unknown')).toMatchObject({ shown: 'unknown', busy: false });
    expect(stateView('Shutting-down')).toMatchObject({ shown: 'shutting-down', busy: true });
  });
});

describe('filter', () => {
  const list = [
    desk({ id: 'a', name: 'Ubuntu lab', description: 'Programming course', state: 'Started' }),
    desk({ id: 'b', name: 'Windows', description: 'Office tools', state: 'Stopped' }),
    desk({ id: 'c', name: 'Debian', description: 'Servers LAB', state: 'WaitingIP' }),
  ];
  it('matches every word in name or description, ignoring case', () => {
    expect(filterDesktops(list, 'lab', false).map((d) => d.id)).toEqual(['a', 'c']);
    expect(filterDesktops(list, '  OFFICE  ', false).map((d) => d.id)).toEqual(['b']);
    expect(filterDesktops(list, 'lab course', false).map((d) => d.id)).toEqual(['a']);
    expect(filterDesktops(list, '', false)).toHaveLength(3);
  });
  it('finds a seeded name by what the person reads too', () => {
    const seeded = [desk({ id: 'd', name: 'Demo desktop', description: '', state: 'Stopped' }), ...list];
    const german = (s: string) => (s === 'Demo desktop' ? 'Demo-Desktop' : s);
    expect(filterDesktops(seeded, 'demo-desktop', false, german).map((d) => d.id)).toEqual(['d']);
    expect(filterDesktops(seeded, 'demo desktop', false, german).map((d) => d.id)).toEqual(['d']);
    expect(filterDesktops(seeded, 'demo-desktop', false).map((d) => d.id)).toEqual([]);
  });
  it('keeps only desktops that are on with "started only"', () => {
    expect(filterDesktops(list, '', true).map((d) => d.id)).toEqual(['a', 'c']);
    expect(filterDesktops(list, 'windows', true)).toEqual([]);
  });
});

describe('view mode and viewer choice memory', () => {
  beforeEach(() => localStorage.clear());
  it('defaults to the grid and remembers the table', () => {
    expect(loadViewMode()).toBe('grid');
    saveViewMode('table');
    expect(loadViewMode()).toBe('table');
    saveViewMode('grid');
    expect(loadViewMode()).toBe('grid');
  });
  it('offers viewers in display order, without address-bound ones while waiting for an IP', () => {
    expect(availableViewers(desk({ viewers: ['file-rdpgw', 'file-spice', 'browser-vnc'], state: 'Started' }))).toEqual(['browser-vnc', 'file-spice', 'file-rdpgw']);
    expect(availableViewers(desk({ viewers: ['file-rdpgw', 'file-spice', 'browser-vnc'], state: 'WaitingIP' }))).toEqual(['browser-vnc', 'file-spice']);
  });
  it('uses the remembered viewer per desktop while it is offered, else the first', () => {
    expect(chosenViewer('d1', ['browser-vnc', 'file-spice'])).toBe('browser-vnc');
    rememberViewer('d1', 'file-spice');
    expect(chosenViewer('d1', ['browser-vnc', 'file-spice'])).toBe('file-spice');
    expect(chosenViewer('d2', ['browser-vnc', 'file-spice'])).toBe('browser-vnc');
    expect(chosenViewer('d1', ['browser-vnc'])).toBe('browser-vnc');
    expect(chosenViewer('d1', [])).toBeNull();
  });
});

describe('dates', () => {
  it('reads the server forms and shows local YYYY-MM-DD HH:mm', () => {
    expect(parseServerDate('2025-05-01T18:00+0000')?.toISOString()).toBe('2025-05-01T18:00:00.000Z');
    expect(parseServerDate('2025-05-01T18:00:00Z')?.toISOString()).toBe('2025-05-01T18:00:00.000Z');
    expect(parseServerDate('2025-05-01T20:30+0200')?.toISOString()).toBe('2025-05-01T18:30:00.000Z');
    expect(parseServerDate(false)).toBeNull();
    expect(parseServerDate('nonsense')).toBeNull();
    const d = new Date(Date.UTC(2025, 4, 1, 18, 0));
    const pad = (n: number) => String(n).padStart(2, '0');
    const local = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
    expect(formatLocal('2025-05-01T18:00+0000')).toBe(local);
    expect(formatLocal(null)).toBeNull();
  });
  it('writes memory without useless decimals', () => {
    expect(memoryLabel(0.25)).toEqual({ key: 'memory_mb', value: '256' });
    expect(memoryLabel(2)).toEqual({ key: 'memory_gb', value: '2' });
    // In the reader's language.
    expect(memoryLabel(1.5, 'pl-PL')).toEqual({ key: 'memory_gb', value: '1,5' });
    expect(memoryLabel(0.5, 'fr-FR')).toEqual({ key: 'memory_mb', value: '512' });
  });
});

describe('live cache', () => {
  it('updates in place, inserts in name order and removes', () => {
    const list = [desk({ id: 'a', name: 'Alpha' }), desk({ id: 'c', name: 'Charlie' })];
    const updated = upsertDesktop(list, desk({ id: 'c', name: 'Charlie', state: 'Started' }));
    expect(updated.map((d) => [d.id, d.state])).toEqual([['a', 'Stopped'], ['c', 'Started']]);
    expect(upsertDesktop(list, desk({ id: 'b', name: 'bravo' })).map((d) => d.id)).toEqual(['a', 'b', 'c']);
    expect(upsertDesktop(undefined, desk({ id: 'x' })).map((d) => d.id)).toEqual(['x']);
    expect(removeDesktop(list, 'a').map((d) => d.id)).toEqual(['c']);
    expect(withStatus(list, 'a', 'Starting')?.[0]?.state).toBe('Starting');
    expect(withStatus(undefined, 'a', 'Starting')).toBeUndefined();
    // A live update that came before the answer wins.
    expect(withStatus([desk({ id: 'a', state: 'Started' })], 'a', 'Starting', 'Stopped')?.[0]?.state).toBe('Started');
    expect(withStatus([desk({ id: 'a', state: 'Stopped' })], 'a', 'Starting', 'Stopped')?.[0]?.state).toBe('Starting');
  });
  it('merges queue positions and drops desktops that left the queue', () => {
    let q = applyQueue({}, { a: { desktop_id: 'a', event: 'queued', position: 1 }, b: { desktop_id: 'b', event: 'queued', position: 2 } });
    expect(q).toEqual({ a: 1, b: 2 });
    q = applyQueue(q, { a: { desktop_id: 'a', event: 'dequeued', position: 0 }, b: { desktop_id: 'b', event: 'queued', position: 1 } });
    expect(q).toEqual({ b: 1 });
    expect(pruneQueue(q, { id: 'b', state: 'Starting' })).toEqual({ b: 1 });
    expect(pruneQueue(q, { id: 'b', state: 'Started' })).toEqual({});
  });
});

describe('a fetched list against live events', () => {
  it('keeps what live events said after the fetch began, and takes the rest from the fetch', () => {
    const stamps = new Map([['new', 200], ['gone', 200], ['old', 50]]);
    const cached = [desk({ id: 'new', name: 'New', state: 'Started' }), desk({ id: 'old', name: 'Old', state: 'Stopped' })];
    const fetched = [desk({ id: 'new', name: 'New', state: 'Starting' }), desk({ id: 'old', name: 'Old', state: 'Started' }), desk({ id: 'gone', name: 'Gone' })];
    const merged = mergeFetched(cached, fetched, 100, stamps);
    expect(merged.map((d) => `${d.id}:${d.state}`)).toEqual(['new:Started', 'old:Started']);
    // A desktop added live after the fetch began stays, though the fetch did not have it.
    expect(mergeFetched([desk({ id: 'new', name: 'New' })], [], 100, stamps).map((d) => d.id)).toEqual(['new']);
    // Without live events the fetch wins.
    expect(mergeFetched(cached, fetched, 300, stamps).map((d) => `${d.id}:${d.state}`)).toEqual(['gone:Stopped', 'new:Starting', 'old:Started']);
  });
});
