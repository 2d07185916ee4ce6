import { useEffect } from 'react';
import { useQueryClient, type QueryKey } from '@tanstack/react-query';
import type { ServerEventName } from '@vdi/contracts';
import { currentSocket, onEvent } from './socket';

/** Events of a burst within this long lead to one read. */
export const EVENT_READ_GAP_MS = 100;

/**
 * Reads a query again when a live event says what it shows changed (and after a reconnection: events may have been
 * missed). A burst leads to one read; a read under way is never cut short by the next event, and one more follows it
 * (it may have started before the change).
 */
export function useRefetchOnEvent(event: ServerEventName, queryKey: QueryKey) {
  const qc = useQueryClient();
  const key = JSON.stringify(queryKey);
  useEffect(() => {
    const queryKey = JSON.parse(key) as QueryKey;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () => {
      timer = undefined;
      if (qc.isFetching({ queryKey, exact: true }) > 0) {
        timer = setTimeout(read, EVENT_READ_GAP_MS);
        return;
      }
      void qc.invalidateQueries({ queryKey, exact: true });
    };
    const soon = () => {
      timer ??= setTimeout(read, EVENT_READ_GAP_MS);
    };
    const off = onEvent(event, soon);
    const socket = currentSocket();
    socket?.io.on('reconnect', soon);
    return () => {
      off();
      socket?.io.off('reconnect', soon);
      clearTimeout(timer);
    };
  }, [qc, event, key]);
}
