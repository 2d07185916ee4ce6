import { z } from 'zod';
import { ZPool, type TPool, type TPoolCreate, type TPoolUpdate } from '@vdi/contracts';
import { api } from '../../lib/api';

const id = (s: string) => encodeURIComponent(s);

export const POOLS_ADMIN_KEY = ['desktop-pools'] as const;

/** How often the open screen reads the pools' numbers again (prepared, preparing, in use…). */
export const POOLS_REFRESH_MS = 3_000;

/** The pools the caller manages, with their live numbers: read again every few seconds while the screen is open. */
export const poolsQuery = {
  queryKey: POOLS_ADMIN_KEY,
  queryFn: (): Promise<TPool[]> => api.get('/desktop-pools', z.array(ZPool)),
  staleTime: 0,
  refetchInterval: POOLS_REFRESH_MS,
  refetchOnWindowFocus: true,
} as const;

export const createPool = (body: TPoolCreate) => api.post('/desktop-pools', body, ZPool);
export const updatePool = (poolId: string, body: TPoolUpdate) => api.put(`/desktop-pools/${id(poolId)}`, body, ZPool);
export const deletePool = (poolId: string) => api.delete(`/desktop-pools/${id(poolId)}`);
