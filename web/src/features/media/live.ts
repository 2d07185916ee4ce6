import { useEffect } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { TMedia } from '@vdi/contracts';
import { currentSocket, onEvent } from '../../lib/socket';
import { OWN_MEDIA_KEY, SHARED_MEDIA_KEY } from './api';
import { removeMedia, upsertMedia } from './logic';

/** Keeps the media lists in step with media_add / media_update / media_delete (sent to the owner). */
export function useMediaLive() {
  const qc = useQueryClient();
  useEffect(() => {
    const upsert = (m: TMedia) => {
      if (!m || typeof m.id !== 'string') return;
      qc.setQueryData<TMedia[]>(OWN_MEDIA_KEY, (l) => (l ? upsertMedia(l, m) : l));
    };
    const offs = [
      onEvent('media_add', upsert),
      onEvent('media_update', upsert),
      onEvent('media_delete', ({ id }) => {
        qc.setQueryData<TMedia[]>(OWN_MEDIA_KEY, (l) => (l ? removeMedia(l, id) : l));
        qc.setQueryData<TMedia[]>(SHARED_MEDIA_KEY, (l) => (l ? removeMedia(l, id) : l));
      }),
    ];
    // Events may have been missed while disconnected.
    const socket = currentSocket();
    const refresh = () => void qc.invalidateQueries({ queryKey: ['media'] });
    socket?.io.on('reconnect', refresh);
    return () => {
      offs.forEach((off) => off());
      socket?.io.off('reconnect', refresh);
    };
  }, [qc]);
}
