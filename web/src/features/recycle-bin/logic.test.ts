import { describe, expect, it } from 'vitest';
import type { TRecycleBinItem } from '@vdi/contracts';
import { addItem, applyStatus, humaniseHours, itemTypeKey } from './logic';

const item = (id: string, over: Partial<TRecycleBinItem> = {}) => ({ id, status: 'recycled', item_name: id, item_type: 'desktop', ...over }) as TRecycleBinItem;

describe('recycle bin live updates (spec 001 §4)', () => {
  it('adds new items first and updates known ones', () => {
    const list = addItem([item('a')], item('b'))!;
    expect(list.map((x) => x.id)).toEqual(['b', 'a']);
    expect(addItem(list, item('a', { item_name: 'renamed' }))!.find((x) => x.id === 'a')!.item_name).toBe('renamed');
  });

  it('removes items whose status is restored, deleting or deleted; other statuses update', () => {
    const list = [item('a'), item('b'), item('c'), item('d')];
    let next = applyStatus(list, { id: 'a', status: 'restored' })!;
    next = applyStatus(next, { id: 'b', status: 'deleting' })!;
    next = applyStatus(next, { id: 'c', status: 'deleted' })!;
    next = applyStatus(next, { id: 'd', status: 'recycled' })!;
    expect(next.map((x) => x.id)).toEqual(['d']);
    expect(addItem(next, item('d', { status: 'deleted' }))).toEqual([]);
  });

  it('humanises the retention hours', () => {
    expect(humaniseHours(1, 'en-US')).toBe('1 hour');
    expect(humaniseHours(36, 'en-US')).toBe('36 hours');
    expect(humaniseHours(48, 'en-US')).toBe('2 days');
    expect(humaniseHours(336, 'en-US')).toBe('2 weeks');
    expect(humaniseHours(2, 'es-ES')).toBe('2 horas');
  });

  it('labels bulk entries apart', () => {
    expect(itemTypeKey('bulk')).toBe('recycle_bin.types.bulk');
    expect(itemTypeKey('weird')).toBe('recycle_bin.types.other');
  });
});
