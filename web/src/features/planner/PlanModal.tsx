import { useEffect, useState } from 'react';
import { Group, Modal, Select, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { TReservableItem } from '@vdi/contracts';
import { useAction } from '../../lib/use-action';
import { formatLocalDate, parseLocal } from '../../entities/booking/dates';
import { ModalError, ModalFooter } from '../../entities/booking/EventModal';
import '../../i18n/areas/bookings';

export type PlanDraft = { id?: string; itemId: string; subitemId: string; start: Date; end: Date; startUnchanged?: boolean };

const DATE_FORMAT = 'YYYY-MM-DD';
const TIME_FORMAT = 'HH:mm';

/** A date and a time typed apart, read back as one local date. */
function useDateTime(value: Date | null) {
  const [date, setDate] = useState('');
  const [time, setTime] = useState('');
  useEffect(() => {
    const local = formatLocalDate(value);
    setDate(local.slice(0, 10));
    setTime(local.slice(11));
  }, [value]);
  return { date, setDate, time, setTime, value: parseLocal(`${date} ${time}`) };
}

function DateTimeFields({ f, which }: { f: ReturnType<typeof useDateTime>; which: 'start' | 'end' }) {
  const { t } = useTranslation();
  const bad = f.date && f.time && !f.value ? t('bookings.modal.bad_date', { format: `${DATE_FORMAT} ${TIME_FORMAT}` }) : null;
  return (
    <SimpleGrid cols={2} spacing="sm">
      <TextInput label={t(`planner.modal.${which}_date`)} placeholder={DATE_FORMAT} value={f.date} onChange={(e) => f.setDate(e.currentTarget.value)} error={bad} required data-testid={`plan-${which}-date`} />
      <TextInput label={t(`planner.modal.${which}_time`)} placeholder={TIME_FORMAT} value={f.time} onChange={(e) => f.setTime(e.currentTarget.value)} required data-testid={`plan-${which}-time`} />
    </SimpleGrid>
  );
}

/** The planning event modal (spec 001 §3): id, item, profile, type, start date and time, end date and time. */
export function PlanModal({
  draft,
  item,
  onClose,
  validate,
  onSave,
  onDelete,
}: {
  draft: PlanDraft | null;
  item: TReservableItem | null;
  onClose: () => void;
  validate: (d: PlanDraft) => string | null;
  onSave: (d: PlanDraft) => Promise<unknown>;
  onDelete: (id: string) => Promise<unknown>;
}) {
  const { t } = useTranslation();
  const [subitemId, setSubitemId] = useState<string | null>(null);
  const start = useDateTime(draft?.start ?? null);
  const end = useDateTime(draft?.end ?? null);
  const action = useAction();
  useEffect(() => {
    setSubitemId(draft?.subitemId || item?.subitems[0]?.id || null);
    action.setError(null);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- reset when another plan or item is opened; the action object is new every render
  }, [draft, item]);
  const editing = Boolean(draft?.id);
  const ready = Boolean(draft && subitemId && start.value && end.value);
  const submit = () => {
    if (!draft || !ready) return;
    const startUnchanged = Boolean(draft.id && draft.startUnchanged && start.value!.getTime() === draft.start.getTime());
    const next: PlanDraft = { ...draft, subitemId: subitemId!, start: start.value!, end: end.value!, startUnchanged };
    const problem = validate(next);
    if (problem) return action.setError(problem);
    void action.run(async () => {
      await onSave(next);
      onClose();
    });
  };
  const remove = draft?.id ? () => void action.run(async () => (await onDelete(draft.id!), onClose())) : undefined;
  return (
    <Modal opened={Boolean(draft)} onClose={onClose} title={t(editing ? 'planner.modal.edit_title' : 'planner.modal.new_title')} centered size="lg">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <Stack gap="md">
          <Group grow>
            {editing && <TextInput label={t('planner.modal.id')} value={draft?.id ?? ''} readOnly variant="filled" data-testid="plan-id" />}
            <TextInput label={t('planner.modal.item')} value={item?.name ?? ''} readOnly variant="filled" data-testid="plan-item" />
            <TextInput label={t('planner.modal.type')} value={t('planner.types.gpus')} readOnly variant="filled" data-testid="plan-type" />
          </Group>
          <Select
            label={t('planner.modal.subitem')}
            data={(item?.subitems ?? []).map((s) => ({ value: s.id, label: t('planner.profile_option', { name: s.name, count: s.units }) }))}
            value={subitemId}
            onChange={setSubitemId}
            allowDeselect={false}
            required
            comboboxProps={{ withinPortal: true }}
            data-testid="plan-subitem"
          />
          <DateTimeFields f={start} which="start" />
          <DateTimeFields f={end} which="end" />
          <ModalError message={action.error} testId="plan-error" />
          <ModalFooter busy={action.busy} onClose={onClose} onDelete={remove} canSave={ready} testId="plan" />
        </Stack>
      </form>
    </Modal>
  );
}
