import { useEffect } from 'react';
import type { ReactNode } from 'react';
import { ActionIcon, Alert, Button, Group, Modal, Stack, Text, Tooltip } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { IconAlertTriangle } from '@tabler/icons-react';
import { handleError, notifySuccess } from '../../../lib/error-handler';
import { useAction } from '../../../lib/use-action';
import { refreshPeople } from './api';
import '../../../i18n/areas/admin';

/** The text of an answer's code (errors.<code> with its params), for per-row results. */
export function useCodeText() {
  const { t, i18n } = useTranslation();
  return (code: string, params?: Record<string, unknown> | null) =>
    i18n.exists(`errors.${code}`) ? t(`errors.${code}`, { ...(params ?? {}) }) : t('errors.generic_error');
}

/** A list's load failure goes to the central handler (maintenance, sign-out, notice). */
export function useListError(error: unknown) {
  useEffect(() => {
    if (error) handleError(error);
  }, [error]);
}

/** A confirmation dialog for a destructive action, its error shown inside. */
export function ConfirmDelete({
  opened, onClose, title, body, onConfirm, confirmLabel, testId,
}: { opened: boolean; onClose: () => void; title: string; body: string; onConfirm: () => Promise<unknown>; confirmLabel: string; testId: string }) {
  const { t } = useTranslation();
  const { busy, error, setError, run } = useAction();
  useEffect(() => setError(null), [opened, setError]);
  return (
    <Modal opened={opened} onClose={onClose} title={title} centered>
      <Stack>
        <Text size="sm">{body}</Text>
        {error && (
          <Alert color="red" icon={<IconAlertTriangle size={16} />} role="alert" data-testid={`${testId}-error`}>
            {error}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {t('common.cancel')}
          </Button>
          <Button
            color="red"
            loading={busy}
            data-testid={`${testId}-confirm`}
            onClick={() =>
              void run(async () => {
                await onConfirm();
                await refreshPeople();
                notifySuccess(t('admin.common.done'));
                onClose();
              })
            }
          >
            {confirmLabel}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Badges in table cells keep their whole word (Mantine's label would be cut to fit a narrow column). */
export const fullBadge = { root: { flexShrink: 0, overflow: 'visible' }, label: { overflow: 'visible' } } as const;

/** One action of a table row: an icon button named by its tooltip (edit, reset, delete…). */
export function RowAction({ label, icon, onClick, color, testId }: { label: string; icon: ReactNode; onClick: () => void; color?: string; testId: string }) {
  return (
    <Tooltip label={label}>
      <ActionIcon variant="subtle" color={color} onClick={onClick} aria-label={label} data-testid={testId}>
        {icon}
      </ActionIcon>
    </Tooltip>
  );
}
