import { useEffect, useMemo } from 'react';
import { ActionIcon, Button, Checkbox, Chip, Divider, Group, Modal, MultiSelect, NumberInput, Paper, SegmentedControl, Select, SimpleGrid, Stack, Switch, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useMediaQuery } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconDeviceFloppy, IconPlus, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { DOMAIN_DESCRIPTION_MAX, DOMAIN_NAME_MAX, DOMAIN_NAME_MIN, POOL_MAX_DESKTOPS, VIEWER_ORDER, ZViewer, type TPool, type TViewer } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { rules } from '../../lib/validation';
import { builtInText } from '../../lib/built-in-text';
import { templatesForNewQuery } from '../../entities/domain/api';
import { SharingPicker } from '../../entities/sharing/SharingPicker';
import { createPool, POOLS_ADMIN_KEY, updatePool } from './api';
import { bodyOf, draftOf, NEW_POOL, newScheduleRow, weekdayNames, type PoolDraft } from './logic';
import '../../i18n/areas/pools';

const VIEWERS = [...ZViewer.options].sort((a, b) => VIEWER_ORDER[a] - VIEWER_ORDER[b]);

/** A part of the form under its heading. */
function Part({ title, hint, children }: { title: string; hint?: string; children: React.ReactNode }) {
  return (
    <Paper withBorder radius="md" p="md">
      <Title order={3} size="h5" mb={hint ? 2 : 'sm'}>
        {title}
      </Title>
      {hint && (
        <Text size="xs" c="dimmed" mb="sm">
          {hint}
        </Text>
      )}
      {children}
    </Paper>
  );
}

/** The pool's form in a dialog: new (`'new'`) or a pool to change; the server's refusals show with the shared handler. */
export function PoolFormModal({ pool, onClose }: { pool: TPool | 'new' | null; onClose: () => void }) {
  const { t, i18n } = useTranslation();
  const r = rules(t);
  const qc = useQueryClient();
  const phone = useMediaQuery('(max-width: 36em)');
  const templates = useQuery({ ...templatesForNewQuery, enabled: pool !== null });
  const days = useMemo(() => weekdayNames(i18n.language), [i18n.language]);
  const form = useForm<PoolDraft>({
    mode: 'controlled',
    initialValues: NEW_POOL,
    validate: {
      name: r.all(r.required, r.minLength(DOMAIN_NAME_MIN), r.maxLength(DOMAIN_NAME_MAX), r.inputFormat),
      description: r.maxLength(DOMAIN_DESCRIPTION_MAX),
      template_id: (v) => (v ? null : t('forms.required')),
      prepared: (v, d) => (v > d.max_desktops ? t('pools_admin.form.prepared_over_max') : null),
      viewers: (v) => (v.length ? null : t('errors.one_viewer_minimum')),
      schedule: {
        days: (v) => (v.length ? null : t('pools_admin.form.one_day')),
        to: (v, d, path) => {
          const row = d.schedule[Number(path.split('.')[1])];
          return row && row.from >= v ? t('pools_admin.form.period_order') : null;
        },
      },
    },
  });
  const editing = pool !== null && pool !== 'new' ? pool : null;
  useEffect(() => {
    if (pool === null) return;
    form.setValues(editing ? draftOf(editing) : NEW_POOL);
    form.resetDirty();
    form.clearErrors();
    // The form is filled when the dialog opens for a pool, not on each refresh of the list.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [pool === null, editing?.id]);
  const list = useMemo(() => {
    const options = (templates.data ?? []).map((x) => ({ value: x.id, label: builtInText(t, x.name) }));
    // The pool's template stays choosable while the caller edits it, even when no longer shared with them.
    if (editing && !options.some((o) => o.value === editing.template_id)) options.unshift({ value: editing.template_id, label: builtInText(t, editing.template_name) || editing.template_id });
    return options;
  }, [templates.data, editing, t]);
  useEffect(() => {
    if (pool === 'new' && !form.values.template_id && templates.data?.length === 1) form.setFieldValue('template_id', templates.data[0]!.id);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [pool, templates.data]);

  const save = useMutation({
    mutationFn: (d: PoolDraft) => (editing ? updatePool(editing.id, bodyOf(d)) : createPool(bodyOf(d))),
    onSuccess: (saved) => {
      notifySuccess(t(editing ? 'pools_admin.form.saved' : 'pools_admin.form.created', { name: saved.name }));
      qc.setQueryData<TPool[]>(POOLS_ADMIN_KEY, (l) => (l ? (editing ? l.map((x) => (x.id === saved.id ? saved : x)) : [...l, saved]) : l));
      void qc.invalidateQueries({ queryKey: POOLS_ADMIN_KEY });
      onClose();
    },
    onError: (err) => handleError(err),
  });
  const v = form.values;
  const viewerLabel = (x: TViewer) => t(`desktops.viewers.${x}`);
  const time = (label: string, path: string) => <TextInput type="time" label={label} {...form.getInputProps(path)} w={140} />;

  return (
    <Modal
      opened={pool !== null}
      onClose={() => !save.isPending && onClose()}
      title={editing ? t('pools_admin.form.edit_title', { name: editing.name }) : t('pools_admin.form.new_title')}
      size="xl"
      radius="lg"
      fullScreen={phone}
      data-testid="pool-form"
    >
      <form onSubmit={form.onSubmit((d) => save.mutate(d))} noValidate>
        <Stack gap="md">
          <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
            <Stack gap="sm">
              <TextInput label={t('pools_admin.form.name')} required maxLength={DOMAIN_NAME_MAX + 10} data-testid="pool-form-name" {...form.getInputProps('name')} />
              <Textarea label={t('pools_admin.form.description')} autosize minRows={2} maxRows={4} data-testid="pool-form-description" {...form.getInputProps('description')} />
              <Select
                label={t('pools_admin.form.template')}
                placeholder={t('pools_admin.form.template_placeholder')}
                data={list}
                searchable
                required
                nothingFoundMessage={t('pools_admin.form.no_templates')}
                data-testid="pool-form-template"
                comboboxProps={{ withinPortal: true }}
                {...form.getInputProps('template_id')}
              />
            </Stack>
            <Part title={t('pools_admin.form.who')} hint={t('pools_admin.form.who_hint')}>
              <SharingPicker value={v.allowed} onChange={(a) => form.setFieldValue('allowed', a)} />
            </Part>
          </SimpleGrid>

          <Part title={t('pools_admin.form.size')}>
            <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
              <NumberInput label={t('pools_admin.form.max')} description={t('pools_admin.form.max_hint')} min={1} max={POOL_MAX_DESKTOPS} allowDecimal={false} allowNegative={false} clampBehavior="strict" data-testid="pool-form-max" {...form.getInputProps('max_desktops')} />
              <NumberInput label={t('pools_admin.form.prepared')} description={t('pools_admin.form.prepared_hint')} min={0} max={POOL_MAX_DESKTOPS} allowDecimal={false} allowNegative={false} clampBehavior="strict" data-testid="pool-form-prepared" {...form.getInputProps('prepared')} />
            </SimpleGrid>
          </Part>

          <Part title={t('pools_admin.form.schedule')} hint={t('pools_admin.form.schedule_hint')}>
            <Stack gap="sm">
              {v.schedule.length === 0 && (
                <Text size="sm" c="dimmed" data-testid="pool-schedule-empty">
                  {t('pools_admin.form.no_rows')}
                </Text>
              )}
              {v.schedule.map((row, i) => (
                <Paper key={i} withBorder radius="sm" p="xs" data-testid="pool-schedule-row">
                  <Stack gap={6}>
                    <Chip.Group multiple value={row.days.map(String)} onChange={(d) => form.setFieldValue(`schedule.${i}.days`, d.map(Number))}>
                      <Group gap={4} role="group" aria-label={t('pools_admin.form.days')}>
                        {days.map((name, d) => (
                          <Chip key={d} value={String(d + 1)} size="xs" variant="outline">
                            {name}
                          </Chip>
                        ))}
                      </Group>
                    </Chip.Group>
                    {form.errors[`schedule.${i}.days`] && (
                      <Text size="xs" c="red">
                        {form.errors[`schedule.${i}.days`]}
                      </Text>
                    )}
                    <Group gap="sm" align="flex-end" wrap="wrap">
                      {time(t('pools_admin.form.from'), `schedule.${i}.from`)}
                      {time(t('pools_admin.form.to'), `schedule.${i}.to`)}
                      <NumberInput label={t('pools_admin.form.row_prepared')} min={0} max={POOL_MAX_DESKTOPS} allowDecimal={false} allowNegative={false} clampBehavior="strict" w={110} {...form.getInputProps(`schedule.${i}.prepared`)} />
                      <ActionIcon variant="subtle" color="red" size="lg" mb={2} aria-label={t('pools_admin.form.remove_row')} onClick={() => form.removeListItem('schedule', i)} data-testid="pool-schedule-remove">
                        <IconTrash size={18} />
                      </ActionIcon>
                    </Group>
                  </Stack>
                </Paper>
              ))}
              <Button variant="light" size="xs" leftSection={<IconPlus size={14} />} style={{ alignSelf: 'flex-start' }} onClick={() => form.insertListItem('schedule', newScheduleRow(v.prepared))} data-testid="pool-schedule-add">
                {t('pools_admin.form.add_row')}
              </Button>
            </Stack>
          </Part>

          <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
            <Part title={t('pools_admin.form.kind')}>
              <Stack gap="sm">
                <SegmentedControl
                  fullWidth
                  value={v.persistent ? 'persistent' : 'fresh'}
                  onChange={(k) => form.setFieldValue('persistent', k === 'persistent')}
                  data={[
                    { value: 'fresh', label: t('pools_admin.kind.fresh') },
                    { value: 'persistent', label: t('pools_admin.kind.persistent') },
                  ]}
                  aria-label={t('pools_admin.form.kind')}
                  data-testid="pool-form-kind"
                />
                <Text size="xs" c="dimmed">
                  {t(v.persistent ? 'pools_admin.form.persistent_hint' : 'pools_admin.form.fresh_hint')}
                </Text>
                {!v.persistent && (
                  <>
                    <Divider label={t('pools_admin.form.give_back')} labelPosition="left" />
                    <Checkbox label={t('pools_admin.form.on_sign_out')} data-testid="pool-form-sign-out" {...form.getInputProps('on_sign_out', { type: 'checkbox' })} />
                    <Group gap="xs" wrap="nowrap" align="center">
                      <Checkbox label={t('pools_admin.form.viewer_closed')} {...form.getInputProps('viewer_closed', { type: 'checkbox' })} />
                      <NumberInput aria-label={t('pools_admin.form.minutes')} suffix={` ${t('pools_admin.form.min')}`} min={1} max={24 * 60} allowDecimal={false} allowNegative={false} clampBehavior="strict" w={100} size="xs" disabled={!v.viewer_closed} {...form.getInputProps('viewer_closed_minutes')} />
                    </Group>
                    <Group gap="xs" wrap="nowrap" align="center">
                      <Checkbox label={t('pools_admin.form.daily')} {...form.getInputProps('daily', { type: 'checkbox' })} />
                      <TextInput type="time" aria-label={t('pools_admin.form.daily_time')} w={130} size="xs" disabled={!v.daily} {...form.getInputProps('daily_at')} />
                    </Group>
                  </>
                )}
              </Stack>
            </Part>
            <Part title={t('pools_admin.form.permissions')}>
              <Stack gap="sm">
                <MultiSelect
                  label={t('pools_admin.form.viewers')}
                  data={VIEWERS.map((x) => ({ value: x, label: viewerLabel(x) }))}
                  comboboxProps={{ withinPortal: true }}
                  data-testid="pool-form-viewers"
                  {...form.getInputProps('viewers')}
                />
                <Switch label={t('pools_admin.form.may_restart')} data-testid="pool-form-restart" {...form.getInputProps('may_restart', { type: 'checkbox' })} />
                <Switch label={t('pools_admin.form.enabled')} description={t('pools_admin.form.enabled_hint')} data-testid="pool-form-enabled" {...form.getInputProps('enabled', { type: 'checkbox' })} />
              </Stack>
            </Part>
          </SimpleGrid>

          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={onClose} disabled={save.isPending}>
              {t('common.cancel')}
            </Button>
            <Button type="submit" leftSection={editing ? <IconDeviceFloppy size={16} /> : <IconPlus size={16} />} loading={save.isPending} data-testid="pool-form-submit">
              {editing ? t('common.save') : t('pools_admin.form.create')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
