import { useEffect, type ReactNode } from 'react';
import { Alert, Button, Group, Paper, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useForm, type UseFormReturnType } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconDeviceFloppy } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TSettingKey, TSettingValue } from '@vdi/contracts';
import { notifySuccess } from '../../../lib/error-handler';
import { errorMessage } from '../../../lib/errors';
import { useAction } from '../../../lib/use-action';
import { saveSetting, settingQuery, type SettingAnswer } from './api';
import '../../../i18n/areas/admin-system';

/** A titled card of one group of fields, with its own save button and error. */
export function SettingCard(props: {
  title: string;
  description?: string;
  testId: string;
  children: ReactNode;
  onSave: () => void;
  busy: boolean;
  dirty: boolean;
  error: string | null;
  extra?: ReactNode;
  /** The button's label and icon when it is not "Save". */
  saveLabel?: string;
  saveIcon?: ReactNode;
  /** The setting's query: a skeleton while it loads, the reason when it could not. */
  query: { isPending: boolean; error: unknown };
}) {
  const { t, i18n } = useTranslation();
  return (
    <Paper withBorder radius="md" p="lg" data-testid={props.testId}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          props.onSave();
        }}
        noValidate
      >
        <Stack gap="md">
          <div>
            <Title order={2} size="h4">
              {props.title}
            </Title>
            {props.description && (
              <Text size="sm" c="dimmed" mt={4}>
                {props.description}
              </Text>
            )}
          </div>
          {props.query.error ? (
            <Alert color="red" icon={<IconAlertCircle size={18} />} title={t('admin_system.load_failed')} data-testid={`${props.testId}-load-error`}>
              {errorMessage(t, props.query.error, (k) => i18n.exists(k))}
            </Alert>
          ) : props.query.isPending ? (
            <Skeleton height={120} radius="md" />
          ) : (
            props.children
          )}
          {props.error && (
            <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert" data-testid={`${props.testId}-error`}>
              {props.error}
            </Alert>
          )}
          <Group justify="flex-end" gap="sm">
            {props.extra}
            <Button type="submit" leftSection={props.saveIcon ?? <IconDeviceFloppy size={16} />} loading={props.busy} disabled={!props.dirty || Boolean(props.query.error)} data-testid={`${props.testId}-save`}>
              {props.saveLabel ?? t('admin_system.save')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}

/**
 * One setting as a form: loads it, keeps the form in step when it changes elsewhere (live), saves
 * the form's values (`toBody` may reshape them) and tells the admin.
 */
export function useSettingForm<K extends TSettingKey, V extends Record<string, unknown>>(
  key: K,
  toForm: (value: SettingAnswer<K>) => V,
  toBody: (values: V) => Partial<TSettingValue<K>> = (v) => v as unknown as Partial<TSettingValue<K>>,
) {
  const { t } = useTranslation();
  const query = useQuery(settingQuery(key));
  const form = useForm<V>({ initialValues: {} as V });
  const action = useAction();
  useEffect(() => {
    if (!query.data) return;
    const values = toForm(query.data);
    form.setInitialValues(values);
    form.setValues(values);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the form is filled from each new answer only; the form object and toForm are new every render
  }, [query.data]);
  const save = () =>
    action.run(async () => {
      if (form.validate().hasErrors) return;
      await saveSetting(key, toBody(form.getValues()));
      notifySuccess(t('admin_system.saved'));
    });
  return { query, form: form as UseFormReturnType<V>, save, busy: action.busy, error: action.error, dirty: form.isDirty() };
}

/** The cards of a settings page, one below the other. */
export function SettingsBody({ children }: { children: ReactNode }) {
  return <Stack gap="lg">{children}</Stack>;
}
