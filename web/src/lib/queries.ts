import { QueryCache, QueryClient } from '@tanstack/react-query';
import { ZRecycleBinCutoff, ZUser, ZUserConfig, type TUser, type TUserConfig } from '@vdi/contracts';
import { z } from 'zod';
import { api } from './api';

const ZBoolean = z.boolean();

declare module '@tanstack/react-query' {
  interface Register {
    queryMeta: TQueryMeta;
  }
}

export type TQueryMeta = {
  /**
   * The screen handles this query's failure itself (shows it where it happened, or goes on
   * without the data), so it does not go to the central handler; a function keeps only the
   * failures it answers true for (a 404 that means "gone", shown by the page).
   */
  handlesError?: true | ((err: unknown) => boolean);
};

/** The screen shows or handles this query's failure itself (see TQueryMeta). */
export const HANDLES_ERROR = { handlesError: true } as const satisfies TQueryMeta;

let reportError: (err: unknown) => void = () => undefined;
/** Where the failures of queries go: the app sets the central handler (lib/error-handler) at start. */
export const setQueryErrorHandler = (fn: (err: unknown) => void) => {
  reportError = fn;
};

/** Whether a failure of a query with this meta goes to the central handler. */
export function reportsError(meta: TQueryMeta | undefined, err: unknown): boolean {
  const own = meta?.handlesError;
  return own === undefined ? true : own === true ? false : !own(err);
}

/**
 * Every failed query reaches the person through one place, the central handler (spec core §8:
 * maintenance, sign-out, error page or a notice), unless its meta says its screen handles it.
 */
export const queryClient = new QueryClient({
  queryCache: new QueryCache({
    onError: (err, query) => {
      if (reportsError(query.meta, err)) reportError(err);
    },
  }),
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 30_000 } },
});

// The guard handles the failures of the session's own queries (sign-out, maintenance); screens read them as they are.
export const userQuery = { queryKey: ['user'], queryFn: (): Promise<TUser> => api.get('/user', ZUser), meta: HANDLES_ERROR } as const;
export const configQuery = { queryKey: ['user', 'config'], queryFn: (): Promise<TUserConfig> => api.get('/user/config', ZUserConfig), staleTime: 60_000, meta: HANDLES_ERROR } as const;
/** The maximum recycle time (hours; 0 = deleting is for good): guard step 7 fetches it for every signed-in screen. */
export const cutoffQuery = {
  queryKey: ['recycle_bin', 'cutoff'],
  queryFn: async (): Promise<number> => (await api.get('/recycle-bin/user/cutoff-time', ZRecycleBinCutoff)).recycle_bin_cuttoff_time,
  staleTime: 5 * 60_000,
  meta: HANDLES_ERROR,
} as const;
/** The default of the "delete for good" checkbox (spec 001 §7). */
export const defaultDeleteQuery = {
  queryKey: ['recycle_bin', 'default-delete'],
  queryFn: (): Promise<boolean> => api.get('/recycle_bin/config/default-delete', ZBoolean),
  staleTime: 5 * 60_000,
  meta: HANDLES_ERROR,
} as const;
