import { QueryClient } from '@tanstack/react-query';
import { ZRecycleBinCutoff, ZUser, ZUserConfig, type TUser, type TUserConfig } from '@vdi/contracts';
import { z } from 'zod';
import { api } from './api';

const ZBoolean = z.boolean();

export const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 30_000 } },
});

export const userQuery = { queryKey: ['user'], queryFn: (): Promise<TUser> => api.get('/user', ZUser) } as const;
export const configQuery = { queryKey: ['user', 'config'], queryFn: (): Promise<TUserConfig> => api.get('/user/config', ZUserConfig), staleTime: 60_000 } as const;
/** The maximum recycle time (hours; 0 = deleting is for good): guard step 7 fetches it for every signed-in screen. */
export const cutoffQuery = {
  queryKey: ['recycle_bin', 'cutoff'],
  queryFn: async (): Promise<number> => (await api.get('/recycle-bin/user/cutoff-time', ZRecycleBinCutoff)).recycle_bin_cuttoff_time,
  staleTime: 5 * 60_000,
} as const;
/** The default of the "delete for good" checkbox (spec 001 §7). */
export const defaultDeleteQuery = {
  queryKey: ['recycle_bin', 'default-delete'],
  queryFn: (): Promise<boolean> => api.get('/recycle_bin/config/default-delete', ZBoolean),
  staleTime: 5 * 60_000,
} as const;
