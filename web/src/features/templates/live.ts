import { useEffect } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { TTemplate } from '@vdi/contracts';
import { currentSocket, onEvent } from '../../lib/socket';
import { OWN_TEMPLATES_KEY } from './api';

export const upsertTemplate = (list: TTemplate[] | undefined, t: TTemplate) => {
  const l = list ?? [];
  const i = l.findIndex((x) => x.id === t.id);
  const next = i >= 0 ? l.map((x, j) => (j === i ? { ...x, ...t, editable: x.editable } : x)) : [...l, t];
  return next.sort((a, b) => a.name.localeCompare(b.name));
};

/** Keeps the own templates in step with template_add / _update / _delete. */
export function useTemplatesLive(onEach?: (event: 'add' | 'update' | 'delete', id: string, t?: TTemplate) => void) {
  const qc = useQueryClient();
  useEffect(() => {
    const set = (fn: (l: TTemplate[] | undefined) => TTemplate[]) => qc.setQueryData<TTemplate[]>(OWN_TEMPLATES_KEY, fn);
    const offs = [
      onEvent('template_add', (t) => {
        set((l) => upsertTemplate(l, t));
        onEach?.('add', t.id, t);
      }),
      onEvent('template_update', (t) => {
        set((l) => upsertTemplate(l, t));
        qc.setQueryData<TTemplate>(['templates', 'one', t.id], (old) => (old ? { ...old, ...t } : t));
        onEach?.('update', t.id, t);
      }),
      onEvent('template_delete', ({ id }) => {
        set((l) => (l ?? []).filter((x) => x.id !== id));
        onEach?.('delete', id);
      }),
    ];
    const socket = currentSocket();
    const refresh = () => void qc.invalidateQueries({ queryKey: OWN_TEMPLATES_KEY });
    socket?.io.on('reconnect', refresh);
    return () => {
      offs.forEach((off) => off());
      socket?.io.off('reconnect', refresh);
    };
  }, [qc, onEach]);
}
