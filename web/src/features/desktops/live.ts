import { useEffect } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { TDesktop } from '@vdi/contracts';
import { currentSocket, onEvent } from '../../lib/socket';
import i18n from '../../i18n';
import { announce } from '../../lib/live';
import { DESKTOPS_KEY, QUEUE_KEY } from '../../entities/desktop/api';
import { applyQueue, liveStamps, pruneQueue, removeDesktop, stateView, upsertDesktop, type QueueMap } from '../../entities/desktop/logic';

/** Keeps the desktops cache in step with the live socket: cards change without reloading. */
export function useDesktopsLive() {
  const qc = useQueryClient();
  useEffect(() => {
    const setList = (fn: (l: TDesktop[] | undefined) => TDesktop[]) => qc.setQueryData<TDesktop[]>(DESKTOPS_KEY, fn);
    const setQueue = (fn: (q: QueueMap) => QueueMap) => qc.setQueryData<QueueMap>(QUEUE_KEY, (q) => fn(q ?? {}));
    const upsert = (d: TDesktop) => {
      if (!d || typeof d.id !== 'string') return;
      // A state that changes on its own (started, stopped, failed…) is said to screen readers.
      const before = qc.getQueryData<TDesktop[]>(DESKTOPS_KEY)?.find((x) => x.id === d.id);
      const shown = stateView(d.state).shown;
      if (before && stateView(before.state).shown !== shown)
        announce(i18n.t('desktops.state_changed', { name: d.name, state: i18n.t(`desktops.states.${shown}`) }), shown === 'failed' ? 'assertive' : 'polite');
      liveStamps.set(d.id, Date.now());
      setList((l) => upsertDesktop(l, d));
      setQueue((q) => pruneQueue(q, d));
    };
    const offs = [
      onEvent('desktop_add', upsert),
      onEvent('desktop_update', upsert),
      onEvent('desktop_delete', ({ id }) => {
        liveStamps.set(id, Date.now());
        setList((l) => removeDesktop(l, id));
        setQueue((q) => {
          if (!(id in q)) return q;
          const next = { ...q };
          delete next[id];
          return next;
        });
      }),
      onEvent('desktops_queue', (event) => setQueue((q) => applyQueue(q, event))),
    ];
    // After a reconnection, events may have been missed: read the list again.
    const socket = currentSocket();
    const refresh = () => void qc.invalidateQueries({ queryKey: DESKTOPS_KEY, exact: true });
    socket?.io.on('reconnect', refresh);
    return () => {
      offs.forEach((off) => off());
      socket?.io.off('reconnect', refresh);
    };
  }, [qc]);
}

/** Queue positions (from desktops_queue), kept only on this side. */
export function useQueuePositions(): QueueMap {
  const qc = useQueryClient();
  const { data } = useQuery({ queryKey: QUEUE_KEY, queryFn: () => qc.getQueryData<QueueMap>(QUEUE_KEY) ?? {}, staleTime: Infinity, gcTime: Infinity });
  return data ?? {};
}
