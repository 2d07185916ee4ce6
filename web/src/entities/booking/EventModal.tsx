import { useEffect, useState, type ReactNode } from 'react';
import { Alert, Button, Group, Modal, Stack, TextInput } from '@mantine/core';
import { IconAlertTriangle, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { useAction } from '../../lib/use-action';
import { formatLocalDate, LOCAL_FORMAT, parseLocal } from './dates';
import '../../i18n/areas/bookings';

export type EventDraft = { id?: string; title: string; start: Date; end: Date };

/** Start and end as typed local YYYY-MM-DD HH:mm, read back as dates (null while not a real date). */
export function useRangeFields(start: Date | null, end: Date | null) {
  const [startText, setStartText] = useState('');
  const [endText, setEndText] = useState('');
  useEffect(() => {
    setStartText(formatLocalDate(start));
    setEndText(formatLocalDate(end));
  }, [start, end]);
  return { startText, setStartText, endText, setEndText, start: parseLocal(startText), end: parseLocal(endText) };
}

export function RangeFields({ f, testId }: { f: ReturnType<typeof useRangeFields>; testId: string }) {
  const { t } = useTranslation();
  const bad = (text: string, d: Date | null) => (text && !d ? t('bookings.modal.bad_date', { format: LOCAL_FORMAT }) : null);
  return (
    <Group grow align="flex-start">
      <TextInput
        label={t('bookings.modal.start')}
        placeholder={LOCAL_FORMAT}
        value={f.startText}
        onChange={(e) => f.setStartText(e.currentTarget.value)}
        error={bad(f.startText, f.start)}
        required
        data-testid={`${testId}-start`}
      />
      <TextInput
        label={t('bookings.modal.end')}
        placeholder={LOCAL_FORMAT}
        value={f.endText}
        onChange={(e) => f.setEndText(e.currentTarget.value)}
        error={bad(f.endText, f.end)}
        required
        data-testid={`${testId}-end`}
      />
    </Group>
  );
}

export function ModalError({ message, testId }: { message: string | null; testId: string }) {
  if (!message) return null;
  return (
    <Alert color="red" variant="light" icon={<IconAlertTriangle size={18} />} data-testid={testId}>
      {message}
    </Alert>
  );
}

/** Footer of the event modals: delete (when editing) on the left, cancel and save on the right. */
export function ModalFooter({ busy, onClose, onDelete, canSave, testId, extra }: { busy: boolean; onClose: () => void; onDelete?: () => void; canSave: boolean; testId: string; extra?: ReactNode }) {
  const { t } = useTranslation();
  return (
    <Group justify="space-between" mt="xs">
      <Group gap="xs">
        {onDelete && (
          <Button color="red" variant="light" leftSection={<IconTrash size={16} />} onClick={onDelete} disabled={busy} data-testid={`${testId}-delete`}>
            {t('bookings.modal.delete')}
          </Button>
        )}
        {extra}
      </Group>
      <Group gap="sm">
        <Button variant="default" onClick={onClose}>
          {t('common.cancel')}
        </Button>
        <Button type="submit" loading={busy} disabled={!canSave} data-testid={`${testId}-save`}>
          {t('common.save')}
        </Button>
      </Group>
    </Group>
  );
}

/**
 * The booking modal: a title, a start and an end. The rules run before anything is sent
 * (validate answers a translated message); a refusal of the server shows its translated code.
 */
export function EventModal({
  draft,
  onClose,
  validate,
  onSave,
  onDelete,
}: {
  draft: EventDraft | null;
  onClose: () => void;
  validate: (start: Date, end: Date, id?: string) => Promise<string | null>;
  onSave: (d: EventDraft) => Promise<unknown>;
  onDelete?: (id: string) => Promise<unknown>;
}) {
  const { t } = useTranslation();
  const [title, setTitle] = useState('');
  const f = useRangeFields(draft?.start ?? null, draft?.end ?? null);
  const action = useAction();
  useEffect(() => {
    setTitle(draft?.title ?? '');
    action.setError(null);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- reset when another booking is opened; the action object is new every render
  }, [draft]);
  const editing = Boolean(draft?.id);
  const submit = () => {
    if (!f.start || !f.end) return;
    const [start, end] = [f.start, f.end];
    void action.run(async () => {
      const problem = await validate(start, end, draft?.id);
      if (problem) return action.setError(problem);
      await onSave({ id: draft?.id, title: title.trim(), start, end });
      onClose();
    });
  };
  const remove = onDelete && draft?.id ? () => void action.run(async () => (await onDelete(draft.id!), onClose())) : undefined;
  return (
    <Modal opened={Boolean(draft)} onClose={onClose} title={t(editing ? 'bookings.modal.edit_title' : 'bookings.modal.new_title')} centered>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <Stack gap="md">
          <TextInput label={t('bookings.modal.title')} value={title} onChange={(e) => setTitle(e.currentTarget.value)} maxLength={120} data-testid="booking-title" />
          <RangeFields f={f} testId="booking" />
          <ModalError message={action.error} testId="booking-error" />
          <ModalFooter busy={action.busy} onClose={onClose} onDelete={remove} canSave={Boolean(f.start && f.end)} testId="booking" />
        </Stack>
      </form>
    </Modal>
  );
}
