import { z } from 'zod';
import { ZPlan, ZReservableItem, type TPlan, type TReservableItem } from '@vdi/contracts';
import { api } from '../../lib/api';
import { toWire } from './dates';

const enc = encodeURIComponent;

export const PLANNER_KEY = ['planner'] as const;

/** GET /admin/reservables/gpus: the GPU cards and the profiles each can offer. */
export const reservableItemsQuery = {
  queryKey: [...PLANNER_KEY, 'items', 'gpus'],
  queryFn: (): Promise<TReservableItem[]> => api.get('/admin/reservables/gpus', z.array(ZReservableItem)),
} as const;

/** GET /admin/reservables_planner/{itemId}/{start}/{end}: the card's plans in the range. */
export const plansQuery = (itemId: string | null, r: { start: Date; end: Date } | null) =>
  ({
    queryKey: [...PLANNER_KEY, 'plans', itemId, r?.start.getTime(), r?.end.getTime()],
    queryFn: (): Promise<TPlan[]> => api.get(`/admin/reservables_planner/${enc(itemId!)}/${enc(toWire(r!.start))}/${enc(toWire(r!.end))}`, z.array(ZPlan)),
    enabled: Boolean(itemId && r),
    placeholderData: (prev: TPlan[] | undefined) => prev,
  }) as const;

export function createPlan(v: { itemId: string; subitemId: string; start: Date; end: Date }) {
  return api.post('/admin/reservables_planner', { item_type: 'gpus', item_id: v.itemId, subitem_id: v.subitemId, start: toWire(v.start), end: toWire(v.end) }, ZPlan);
}

export function updatePlan(id: string, v: { subitemId: string; start: Date; end: Date }) {
  return api.put(`/admin/reservables_planner/${enc(id)}`, { subitem_id: v.subitemId, start: toWire(v.start), end: toWire(v.end) }, ZPlan);
}

export function deletePlan(id: string) {
  return api.delete(`/admin/reservables_planner/${enc(id)}`, z.unknown());
}
