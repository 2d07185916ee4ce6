import { z } from 'zod';
import { ZPool, type TPool, type TPoolCreate, type TPoolUpdate } from '@vdi/contracts';
import { api } from '../../lib/api';

const id = (s: string) => encodeURIComponent(s);

export const POOLS_ADMIN_KEY = ['desktop-pools'] as const;

/**
 * How often the open screen reads the pools' numbers again by itself: only in case the live socket lost an event
 * (the screen reads them again at each desktop_pool_changed, `usePoolsLive`).
 */
export const POOLS_FALLBACK_MS = 30_000;

/** The pools the caller manages, with their live numbers (read again at each change the socket tells of). */
export const poolsQuery = {
  queryKey: POOLS_ADMIN_KEY,
  queryFn: (): Promise<TPool[]> => api.get('/desktop-pools', z.array(ZPool)),
  staleTime: 0,
  refetchInterval: POOLS_FALLBACK_MS,
  refetchOnWindowFocus: true,
} as const;

export const createPool = (body: TPoolCreate) => api.post('/desktop-pools', body, ZPool);
export const updatePool = (poolId: string, body: TPoolUpdate) => api.put(`/desktop-pools/${id(poolId)}`, body, ZPool);
export const deletePool = (poolId: string) => api.delete(`/desktop-pools/${id(poolId)}`);
