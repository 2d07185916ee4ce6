import { useEffect } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import {
  ZRecycleBinDetail,
  ZRecycleBinItem,
  ZRecycleBinRestoreAnswer,
  type TRecycleBinDetail,
  type TRecycleBinItem,
} from '@vdi/contracts';
import { api } from '../../lib/api';
import { currentSocket, onEvent } from '../../lib/socket';
import { addItem, applyStatus } from './logic';
import { HANDLES_ERROR } from '../../lib/queries';

export const BIN_KEY = ['recycle_bin', 'user'] as const;
export const BIN_COUNT_KEY = ['recycle_bin', 'count'] as const;

export const binQuery = {
  queryKey: BIN_KEY,
  queryFn: (): Promise<TRecycleBinItem[]> => api.get('/recycle_bin/item_count/user', z.array(ZRecycleBinItem)),
  refetchOnWindowFocus: true,
} as const;

export const binCountQuery = {
  queryKey: BIN_COUNT_KEY,
  queryFn: (): Promise<number> => api.get('/recycle_bin/count', z.number()),
  staleTime: 60_000,
  // A badge in the navigation: without a count it is not shown.
  meta: HANDLES_ERROR,
} as const;

export { cutoffQuery } from '../../lib/queries';

export const entryQuery = (id: string) =>
  ({
    queryKey: ['recycle_bin', 'entry', id],
    queryFn: (): Promise<TRecycleBinDetail> => api.get(`/recycle_bin/${encodeURIComponent(id)}`, ZRecycleBinDetail),
  }) as const;

export const restoreEntry = (id: string) => api.put(`/recycle_bin/restore/${encodeURIComponent(id)}`, {}, ZRecycleBinRestoreAnswer);
export const deleteEntry = (id: string) => api.delete(`/recycle_bin/${encodeURIComponent(id)}`);
export const emptyBin = () => api.delete('/recycle_bin/empty');

/**
 * Keeps the bin list and its counter in step with the live events (objects: add carries the
 * list item, update and delete carry {id, status}). Safe to use in several places at once.
 */
export function useRecycleBinLive() {
  const qc = useQueryClient();
  useEffect(() => {
    const recount = () => void qc.invalidateQueries({ queryKey: BIN_COUNT_KEY, exact: true });
    const offs = [
      onEvent('add_recycle_bin', (item) => {
        qc.setQueryData<TRecycleBinItem[]>(BIN_KEY, (l) => addItem(l, item));
        recount();
      }),
      onEvent('update_recycle_bin', (e) => {
        qc.setQueryData<TRecycleBinItem[]>(BIN_KEY, (l) => applyStatus(l, e));
        void qc.invalidateQueries({ queryKey: ['recycle_bin', 'entry', e.id], exact: true });
        recount();
      }),
      onEvent('delete_recycle_bin', (e) => {
        qc.setQueryData<TRecycleBinItem[]>(BIN_KEY, (l) => applyStatus(l, e));
        void qc.invalidateQueries({ queryKey: ['recycle_bin', 'entry', e.id], exact: true });
        recount();
      }),
    ];
    const socket = currentSocket();
    const refresh = () => {
      void qc.invalidateQueries({ queryKey: BIN_KEY, exact: true });
      recount();
    };
    socket?.io.on('reconnect', refresh);
    return () => {
      offs.forEach((off) => off());
      socket?.io.off('reconnect', refresh);
    };
  }, [qc]);
}
