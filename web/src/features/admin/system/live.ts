import { useEffect } from 'react';
import type { Socket } from 'socket.io-client';
import { ADMIN_SOCKET_NAMESPACE, SOCKET_OPTIONS, SOCKET_PATH, type AdminEventName, type AdminServerEvents } from '@vdi/contracts';
import { session } from '../../../lib/session';
import { queryClient } from '../../../lib/queries';
import { AUDIT_KEY, settingKey } from './api';

/**
 * The console's live socket (/administrators), one per tab, open while a screen uses it: admins
 * hear every change, managers their category's. Screens read again what an event names.
 */
let socket: Socket | null = null;
let users = 0;
let opening: Promise<Socket> | null = null;

async function open(): Promise<Socket> {
  if (socket) return socket;
  opening ??= import('socket.io-client').then(({ io }) => {
    socket = io(ADMIN_SOCKET_NAMESPACE, {
      path: SOCKET_PATH,
      transports: ['websocket'],
      ...SOCKET_OPTIONS,
      auth: (cb) => cb({ jwt: session.token() ?? '' }),
    });
    return socket;
  });
  return opening;
}

function close() {
  socket?.disconnect();
  socket = null;
  opening = null;
}

/** Subscribes to one event of /administrators while the component is mounted. */
export function useAdminEvent<E extends AdminEventName>(event: E, handler: (payload: AdminServerEvents[E]) => void) {
  useEffect(() => {
    let s: Socket | null = null;
    let gone = false;
    const listener = (raw: unknown) => {
      try {
        handler((typeof raw === 'string' ? JSON.parse(raw) : raw) as AdminServerEvents[E]);
      } catch {
        /* a bad payload is ignored */
      }
    };
    users += 1;
    void open().then((sock) => {
      if (gone) return;
      s = sock;
      s.on(event as string, listener);
    });
    return () => {
      gone = true;
      s?.off(event as string, listener);
      users -= 1;
      if (users === 0) close();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the subscription is per event; the handler of the first render is kept (callers pass a fresh arrow each render, which would reconnect the socket every time)
  }, [event]);
}

/** Settings screens: a setting changed elsewhere (another admin) is read again. */
export function useSettingsLive() {
  useAdminEvent('settings_update', ({ key }) => void queryClient.invalidateQueries({ queryKey: settingKey(key) }));
}

/** The audit screen: new entries are read again (at most every second). */
export function useAuditLive(onNew: () => void) {
  useAdminEvent('audit_add', () => {
    onNew();
    scheduleAuditRefresh();
  });
}
let refresh: ReturnType<typeof setTimeout> | null = null;
function scheduleAuditRefresh() {
  refresh ??= setTimeout(() => {
    refresh = null;
    void queryClient.invalidateQueries({ queryKey: AUDIT_KEY });
  }, 1000);
}
