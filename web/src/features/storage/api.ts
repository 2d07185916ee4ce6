import { useEffect } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { ZStorageDisk, ZStorageTaskAnswer, type TStorageDisk, type TStorageEvent, type TStoragePriority } from '@vdi/contracts';
import { api } from '../../lib/api';
import { currentSocket, onEvent } from '../../lib/socket';
import { applyStorageEvent } from './logic';

export const STORAGE_KEY = ['storage', 'ready'] as const;

export const storageQuery = {
  queryKey: STORAGE_KEY,
  queryFn: (): Promise<TStorageDisk[]> => api.get('/storage/ready', z.array(ZStorageDisk)),
  refetchOnWindowFocus: true,
} as const;

const id = (s: string) => encodeURIComponent(s);

export const increaseStorage = (storageId: string, priority: TStoragePriority, increment: number) =>
  api.put(`/storage/${id(storageId)}/priority/${priority}/increase/${increment}`, {}, ZStorageTaskAnswer);

export const abortStorage = (storageId: string) => api.put(`/storage/${id(storageId)}/abort_operations`, {}, ZStorageTaskAnswer);

/** Keeps the disks list in step with `storage` events; `onOutcome` hears how operations end. */
export function useStorageLive(onOutcome?: (e: TStorageEvent) => void) {
  const qc = useQueryClient();
  useEffect(() => {
    const off = onEvent('storage', (e) => {
      qc.setQueryData<TStorageDisk[]>(STORAGE_KEY, (l) => applyStorageEvent(l, e));
      if (e.outcome !== 'running') {
        void qc.invalidateQueries({ queryKey: STORAGE_KEY, exact: true });
        void qc.invalidateQueries({ queryKey: ['user'], exact: true });
        onOutcome?.(e);
      }
    });
    const socket = currentSocket();
    const refresh = () => void qc.invalidateQueries({ queryKey: STORAGE_KEY, exact: true });
    socket?.io.on('reconnect', refresh);
    return () => {
      off();
      socket?.io.off('reconnect', refresh);
    };
  }, [qc, onOutcome]);
}
