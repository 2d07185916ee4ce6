import { useEffect } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { currentSocket, onEvent } from '../../lib/socket';
import { BOOKINGS_KEY } from './api';

/**
 * Keeps every booking calendar current: a booking or plan added, changed or removed anywhere
 * (bookingitem_*, booking_*, plan_*) reloads what is shown, since availability moves with it.
 */
export function useBookingsLive(extraKeys: readonly (readonly unknown[])[] = []) {
  const qc = useQueryClient();
  const extra = JSON.stringify(extraKeys);
  useEffect(() => {
    const refresh = () => {
      void qc.invalidateQueries({ queryKey: BOOKINGS_KEY });
      for (const key of JSON.parse(extra) as unknown[][]) void qc.invalidateQueries({ queryKey: key });
    };
    const offs = (
      ['bookingitem_add', 'bookingitem_update', 'bookingitem_delete', 'booking_add', 'booking_update', 'booking_delete', 'plan_add', 'plan_update', 'plan_delete'] as const
    ).map((e) => onEvent(e, refresh));
    const socket = currentSocket();
    socket?.io.on('reconnect', refresh);
    return () => {
      offs.forEach((off) => off());
      socket?.io.off('reconnect', refresh);
    };
  }, [qc, extra]);
}
