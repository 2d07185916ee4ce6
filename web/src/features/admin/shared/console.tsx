import { useEffect, type ReactNode } from 'react';
import { ActionIcon, Alert, Button, Group, Modal, Paper, Skeleton, Stack, Table, Text, Tooltip, type ModalProps, type TableProps } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { IconAlertTriangle } from '@tabler/icons-react';
import { notifySuccess } from '../../../lib/error-handler';
import { useAction } from '../../../lib/use-action';
import { CardTable } from '../../../components/CardTable';
import '../../../i18n/areas/admin';

// The console's scaffolding, one piece each, for all its sections: the list table, the form
// modal with its footer, the confirmation of a delete, a row's action and the text of a code.

/** The text of an answer's code (errors.<code> with its params), for per-row results. */
export function useCodeText() {
  const { t, i18n } = useTranslation();
  return (code: string, params?: Record<string, unknown> | null) =>
    i18n.exists(`errors.${code}`) ? t(`errors.${code}`, { ...(params ?? {}) }) : t('errors.generic_error');
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

/** A form's or a dialog's failure, in red, where the person is looking. */
export function FormError({ error, testId }: { error: string | null; testId?: string }) {
  return error ? (
    <Alert color="red" icon={<IconAlertTriangle size={16} />} role="alert" data-testid={testId}>
      {error}
    </Alert>
  ) : null;
}

/** The end of a form: its failure, then Cancel and the form's action (`<testId>-error`, `<testId>-save`). */
export function FormFooter({ error, busy, onClose, testId, saveLabel, saveDisabled }: { error: string | null; busy: boolean; onClose: () => void; testId: string; saveLabel?: string; saveDisabled?: boolean }) {
  const { t } = useTranslation();
  return (
    <>
      <FormError error={error} testId={`${testId}-error`} />
      <Group justify="flex-end">
        <Button variant="default" onClick={onClose}>
          {t('common.cancel')}
        </Button>
        <Button type="submit" loading={busy} disabled={saveDisabled} data-testid={`${testId}-save`}>
          {saveLabel ?? t('common.save')}
        </Button>
      </Group>
    </>
  );
}

/** A creation or edit form in a modal: its fields, then FormFooter; Enter submits. */
export function FormModal({
  opened, onClose, title, size, onSubmit, busy, error, testId, saveLabel, saveDisabled, children,
}: {
  opened: boolean;
  onClose: () => void;
  title: string;
  size?: ModalProps['size'];
  onSubmit: () => unknown;
  busy: boolean;
  error: string | null;
  testId: string;
  saveLabel?: string;
  saveDisabled?: boolean;
  children: ReactNode;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={title} size={size} centered>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void onSubmit();
        }}
      >
        <Stack gap="sm">
          {children}
          <FormFooter error={error} busy={busy} onClose={onClose} testId={testId} saveLabel={saveLabel} saveDisabled={saveDisabled} />
        </Stack>
      </form>
    </Modal>
  );
}

/**
 * Asks before an action (`<testId>-confirm`); its failure is shown inside (`<testId>-error`), a
 * success closes it. The dialog itself carries `modalTestId` (the testId unless null).
 */
export function ConfirmModal({ opened, onClose, title, children, confirmLabel, cancelLabel, color = 'red', onConfirm, testId, modalTestId = testId, disabled }: {
  opened: boolean; onClose: () => void; title: string; children: ReactNode; confirmLabel: string; cancelLabel?: string; color?: string;
  onConfirm: () => Promise<unknown>; testId: string; modalTestId?: string | null; disabled?: boolean;
}) {
  const { t } = useTranslation();
  const { busy, error, setError, run } = useAction();
  useEffect(() => setError(null), [opened, setError]);
  return (
    <Modal opened={opened} onClose={onClose} title={title} centered data-testid={modalTestId ?? undefined}>
      <Stack>
        {children}
        <FormError error={error} testId={`${testId}-error`} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {cancelLabel ?? t('common.cancel')}
          </Button>
          <Button
            color={color}
            loading={busy}
            disabled={disabled}
            data-testid={`${testId}-confirm`}
            onClick={() =>
              void run(async () => {
                await onConfirm();
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

/** Confirms a delete in words (`body`), then says it is done. */
export function ConfirmDelete({ body, onConfirm, ...props }: { opened: boolean; onClose: () => void; title: string; body: string; onConfirm: () => Promise<unknown>; confirmLabel: string; testId: string }) {
  const { t } = useTranslation();
  const confirm = async () => {
    await onConfirm();
    notifySuccess(t('admin.common.done'));
  };
  return (
    <ConfirmModal {...props} modalTestId={null} onConfirm={confirm}>
      <Text size="sm">{body}</Text>
    </ConfirmModal>
  );
}

/**
 * A section's list: a skeleton while it loads, then its failure or its empty state when there is
 * one to show, else the table (CardTable: cards on a phone) in a bordered card.
 */
export function ListTable({
  pending, loading, failed, empty, head, children, ...table
}: {
  pending: boolean;
  /** What shows while loading (a plain skeleton by default). */
  loading?: ReactNode;
  /** The load's failure, when the list has none to show. */
  failed?: ReactNode;
  /** The empty state, when there are no rows. */
  empty?: ReactNode;
  /** The heading row. */
  head: ReactNode;
  children: ReactNode;
} & TableProps & { minWidth: number }) {
  if (pending) return <>{loading ?? <Skeleton h={120} radius="lg" />}</>;
  if (failed) return <>{failed}</>;
  if (empty) return <>{empty}</>;
  return (
    <Paper withBorder radius="lg" style={{ overflow: 'hidden' }}>
      <CardTable {...table}>
        <Table.Thead>{head}</Table.Thead>
        <Table.Tbody>{children}</Table.Tbody>
      </CardTable>
    </Paper>
  );
}

/** The bar over a list while rows are chosen: how many, and what can be done to all of them. `testId`: the list's prefix. */
export function BulkBar({ testId, label, children }: { testId: string; label: string; children: ReactNode }) {
  return (
    <Paper withBorder radius="lg" p="sm" bg="var(--mantine-color-indigo-light)" data-testid={`${testId}-bulk-bar`}>
      <Group gap="xs" wrap="wrap">
        <Text size="sm" fw={600} data-testid={`${testId}-selected-count`}>
          {label}
        </Text>
        {children}
      </Group>
    </Paper>
  );
}
