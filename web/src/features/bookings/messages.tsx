import { useEffect } from 'react';
import { Alert, Button, Group, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ZMessageTemplate, type TSocketMessage } from '@vdi/contracts';
import { loadArea } from '../../i18n';
import { api } from '../../lib/api';
import { modals } from '../../lib/modals';
import { onEvent } from '../../lib/socket';
import { formatLocalDate } from '../../entities/booking/dates';

const COLORS: Record<TSocketMessage['type'], string> = { info: 'blue', warning: 'orange', danger: 'red' };

/** The catalogue key of a live message: bookings.messages.<code>, else errors.<code>; null when unknown. */
export function messageKey(code: string, exists: (k: string) => boolean): string | null {
  return [`bookings.messages.${code}`, `errors.${code}`].find(exists) ?? null;
}

/** `{{param}}` of a message template filled from the message's params. */
export const fillTemplate = (text: string, params: Record<string, unknown>) =>
  text.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, key: string) => (Object.hasOwn(params, key) ? String(params[key]) : whole));

/**
 * Live `msg` events (a booking ends in 15 or 5 minutes, a plan takes the profile away…) raise the
 * message dialog of the spec's modal list, with the texts of `GET /message-template/{code}` (the
 * catalogue's text when the server has none); it stays until closed.
 */
export function useLiveMessages(enabled: boolean) {
  const { t, i18n } = useTranslation();
  useEffect(() => {
    if (!enabled) return;
    let active = true;
    const off = onEvent('msg', (m) => {
      const params = { ...(m.params ?? {}) } as Record<string, unknown>;
      if (typeof params.date === 'string') params.date = formatLocalDate(params.date) || params.date;
      const template = api
        .get(`/message-template/${encodeURIComponent(m.msg_code)}?lang=${encodeURIComponent(i18n.language)}`, ZMessageTemplate)
        .then((tpl) => ({ title: fillTemplate(tpl.title, params), body: fillTemplate(tpl.body, params) }))
        .catch(() => null);
      // The shell does not load these texts up front: they come with the first message.
      void Promise.all([template, loadArea('bookings'), loadArea('account')].map((p) => p.catch(() => null))).then(([texts]) => {
        if (!active) return;
        let content = texts as { title: string; body: string } | null;
        if (!content) {
          const key = messageKey(m.msg_code, (k) => i18n.exists(k));
          if (!key) return console.info('Live message without a text', m.msg_code);
          content = { title: t('account.message.title'), body: t(key, params) };
        }
        const id: string = modals.open({
          title: content.title,
          centered: true,
          closeOnClickOutside: false,
          children: (
            <Stack data-testid="message-dialog" data-code={m.msg_code}>
              <Alert color={COLORS[m.type] ?? 'blue'} variant="light">
                <Text size="sm">{content.body}</Text>
              </Alert>
              <Group justify="flex-end">
                <Button onClick={() => modals.close(id)} data-testid="message-dialog-close">
                  {t('account.message.close')}
                </Button>
              </Group>
            </Stack>
          ),
        });
      });
    });
    return () => {
      active = false;
      off();
    };
  }, [enabled, t, i18n]);
}
