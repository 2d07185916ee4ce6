import { describe, expect, it } from 'vitest';
import type { TMedia } from '@vdi/contracts';
import { bootable, clampStep, filterMedia, mediaActions, statusLook, upsertMedia } from './logic';

const media = (over: Partial<TMedia>): TMedia => ({
  id: 'm1', name: 'Ubuntu', description: '', url: 'https://example.org/u.iso', kind: 'iso', type: 'iso', status: 'Downloaded', icon: '',
  user: 'u', user_name: 'Teo', category: 'c', category_name: 'C', group: 'g', group_name: 'G',
  allowed: { roles: false, categories: false, groups: false, users: false }, progress: null, size: 0, detail: '', accessed: null, created: 0, editable: true,
  ...over,
});

describe('media logic', () => {
  it('offers the actions of each status', () => {
    expect(mediaActions(media({ status: 'Downloading' }))).toEqual(['abort', 'delete']);
    expect(mediaActions(media({ status: 'DownloadFailed' }))).toEqual(['retry', 'delete']);
    expect(mediaActions(media({ status: 'DownloadFailedInvalidFormat' }))).toEqual(['retry', 'delete']);
    expect(mediaActions(media({ status: 'Downloaded' }))).toEqual(['new_desktop', 'delete']);
    expect(mediaActions(media({ status: 'Downloaded', kind: 'floppy' }))).toEqual(['delete']);
    expect(mediaActions(media({ status: 'Downloaded', editable: false }))).toEqual(['new_desktop']);
    expect(mediaActions(media({ status: 'Downloading', editable: false }))).toEqual([]);
    expect(mediaActions(media({ status: 'DownloadAborting' }))).toEqual([]);
    expect(statusLook('Downloading')).toMatchObject({ busy: true, tone: 'working' });
    expect(statusLook('Whatever')).toMatchObject({ tone: 'other' });
  });

  it('searches only from two typed letters', () => {
    const list = [media({ id: 'a', name: 'Ubuntu' }), media({ id: 'b', name: 'Debian' })];
    expect(filterMedia(list, 'u')).toHaveLength(2);
    expect(filterMedia(list, 'ub').map((m) => m.id)).toEqual(['a']);
    expect(filterMedia(list, ' DEB ').map((m) => m.id)).toEqual(['b']);
  });

  it('keeps the list in step with live events, sorted by name', () => {
    let list = upsertMedia(undefined, media({ id: 'b', name: 'B' }));
    list = upsertMedia(list, media({ id: 'a', name: 'A' }));
    expect(list.map((m) => m.id)).toEqual(['a', 'b']);
    list = upsertMedia(list, media({ id: 'a', name: 'A', status: 'Downloading' }));
    expect(list[0]!.status).toBe('Downloading');
    expect(upsertMedia(list, media({ id: 'a', status: 'deleted' })).map((m) => m.id)).toEqual(['b']);
    expect(bootable([media({ id: 'x' }), media({ id: 'y', status: 'Downloading' }), media({ id: 'z', kind: 'floppy' })]).map((m) => m.id)).toEqual(['x']);
  });

  it('rounds hardware to its steps within the quota', () => {
    expect(clampStep(1.3, 0.5, 0.5, 8)).toBe(1.5);
    expect(clampStep(20, 1, 1, 8)).toBe(8);
    expect(clampStep(0, 0.5, 0.5, 8)).toBe(0.5);
  });
});
