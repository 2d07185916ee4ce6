import { useEffect } from 'react';
import { notifications } from '@mantine/notifications';
import { useTranslation } from 'react-i18next';
import type { TSocketMessage } from '@vdi/contracts';
import { loadArea } from '../../i18n';
import { onEvent } from '../../lib/socket';
import { formatLocalDate } from './dates';

const COLORS: Record<TSocketMessage['type'], string> = { info: 'blue', warning: 'orange', danger: 'red' };
/** Warnings stay the longest the spec allows (1 to 3 s). */
const MESSAGE_MS = 3000;

/** The catalogue key of a live message: bookings.messages.<code>, else errors.<code>; null when unknown. */
export function messageKey(code: string, exists: (k: string) => boolean): string | null {
  return [`bookings.messages.${code}`, `errors.${code}`].find(exists) ?? null;
}

/** Live `msg` events (a booking ends in 15 or 5 minutes, a plan takes the profile away…) as notifications. */
export function useLiveMessages(enabled: boolean) {
  const { t, i18n } = useTranslation();
  useEffect(() => {
    if (!enabled) return;
    let active = true;
    const off = onEvent('msg', (m) => {
      // The shell does not load the bookings texts up front: they come with the first message.
      void loadArea('bookings')
        .catch((err: unknown) => console.warn('Bookings texts not loaded', err))
        .then(() => {
          if (!active) return;
          const key = messageKey(m.msg_code, (k) => i18n.exists(k));
          if (!key) return console.info('Live message without a text', m.msg_code);
          const params = { ...(m.params ?? {}) } as Record<string, unknown>;
          if (typeof params.date === 'string') params.date = formatLocalDate(params.date) || params.date;
          notifications.show({ message: t(key, params), color: COLORS[m.type] ?? 'blue', autoClose: MESSAGE_MS, withBorder: true });
        });
    });
    return () => {
      active = false;
      off();
    };
  }, [enabled, t, i18n]);
}
