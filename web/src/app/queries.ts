import { QueryClient } from '@tanstack/react-query';
import { ZUser, ZUserConfig, type TUser, type TUserConfig } from '@vdi/contracts';
import { api } from '../lib/api';

export const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 30_000 } },
});

export const userQuery = { queryKey: ['user'], queryFn: (): Promise<TUser> => api.get('/user', ZUser) } as const;
export const configQuery = { queryKey: ['user', 'config'], queryFn: (): Promise<TUserConfig> => api.get('/user/config', ZUserConfig), staleTime: 60_000 } as const;
