import { modals } from './modals';
import { notifications } from '@mantine/notifications';
import { Button, Group, Text } from '@mantine/core';
import i18n from '../i18n';
import { RequestTimeout } from './api';
import { classifyError, errorMessage } from './errors';
import { logout } from './session-actions';

let navigate: (to: string) => void = (to) => location.assign(to);
export const setErrorNavigator = (fn: (to: string) => void) => {
  navigate = fn;
};

export const NOTIFY_MS = 2000;

export function notifySuccess(message: string) {
  notifications.show({ message, color: 'teal', autoClose: NOTIFY_MS });
}

/** A success that can be undone: the notice carries an "Undo" button (closing it when pressed). */
export function notifyWithUndo(message: string, undoLabel: string, onUndo: () => void) {
  const id = notifications.show({
    color: 'teal',
    autoClose: NOTIFY_MS * 2,
    message: (
      <Group justify="space-between" wrap="nowrap" gap="sm">
        <span>{message}</span>
        <Button
          size="compact-sm"
          variant="light"
          onClick={() => {
            notifications.hide(id);
            onUndo();
          }}
          data-testid="notify-undo"
        >
          {undoLabel}
        </Button>
      </Group>
    ),
  });
}

/** The one place where failures become what a person sees (spec core §8). */
export function handleError(err: unknown, opts: { schedulerCall?: boolean } = {}) {
  const action = classifyError(err, opts);
  const t = i18n.t.bind(i18n);
  const message = errorMessage(t, err, (k) => i18n.exists(k));
  switch (action.kind) {
    case 'maintenance':
      return navigate('/maintenance');
    case 'error-page':
      return navigate(`/error/${action.code}`);
    case 'logout':
      return void logout({ callServer: false });
    case 'ignore':
      return console.info('Rate limited', err);
    case 'quota':
      return modals.openConfirmModal({
        title: t('quota_dialog.title'),
        children: <Text size="sm">{message}</Text>,
        labels: { confirm: t('quota_dialog.go_profile'), cancel: t('common.close') },
        onConfirm: () => navigate('/profile'),
      });
    case 'notify':
      // No answer in time is a notice (the work may still end well), not a failure.
      return notifications.show({ message, color: err instanceof RequestTimeout ? 'orange' : 'red', autoClose: NOTIFY_MS });
  }
}
