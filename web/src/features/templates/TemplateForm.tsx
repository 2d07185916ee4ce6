import type { ReactNode } from 'react';
import { Button, Card, Group, SimpleGrid, Stack, Switch, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useTranslation } from 'react-i18next';
import { DOMAIN_DESCRIPTION_MAX, DOMAIN_NAME_MAX, DOMAIN_NAME_MIN, TEMPLATE_NOT_SHARED, type TTemplateAllowed } from '@vdi/contracts';
import { rules } from '../../lib/validation';
import { SharingPicker } from '../../entities/sharing/SharingPicker';
import '../../i18n/areas/content';

export type TemplateFormValues = { name: string; description: string; enabled: boolean; allowed: TTemplateAllowed };

/** Name, description, enabled and sharing of a new or duplicated template. */
export function TemplateForm({
  initial,
  onSubmit,
  onCancel,
  submitLabel,
  submitIcon,
  busy,
  disabled,
  aside,
  nameError,
}: {
  initial: Partial<TemplateFormValues>;
  onSubmit: (v: TemplateFormValues) => void;
  onCancel: () => void;
  submitLabel: string;
  submitIcon: ReactNode;
  busy?: boolean;
  disabled?: boolean;
  aside?: ReactNode;
  nameError?: string | null;
}) {
  const { t } = useTranslation();
  const r = rules(t);
  const form = useForm<TemplateFormValues>({
    mode: 'controlled',
    initialValues: { name: '', description: '', enabled: true, allowed: TEMPLATE_NOT_SHARED, ...initial },
    validate: {
      name: r.all(r.required, r.minLength(DOMAIN_NAME_MIN), r.maxLength(DOMAIN_NAME_MAX), r.inputFormat),
      description: r.maxLength(DOMAIN_DESCRIPTION_MAX),
    },
  });
  const nameProps = form.getInputProps('name');
  return (
    <form onSubmit={form.onSubmit((v) => onSubmit({ ...v, name: v.name.trim(), description: v.description.trim() }))} noValidate>
      <SimpleGrid cols={{ base: 1, md: aside ? 2 : 1 }} spacing="lg">
        <Card withBorder padding="lg" radius="lg">
          <Title order={2} size="h4" mb="md">
            {t('templates.form.details')}
          </Title>
          <Stack gap="md">
            <TextInput label={t('templates.form.name')} required disabled={disabled} data-testid="template-name" {...nameProps} error={nameProps.error ?? nameError} />
            <Textarea label={t('templates.form.description')} autosize minRows={3} maxRows={6} disabled={disabled} data-testid="template-description" {...form.getInputProps('description')} />
            <Switch
              label={t('templates.form.enabled')}
              description={t('templates.form.enabled_hint')}
              disabled={disabled}
              data-testid="template-enabled"
              {...form.getInputProps('enabled', { type: 'checkbox' })}
            />
          </Stack>
        </Card>
        {aside}
      </SimpleGrid>
      <Card withBorder padding="lg" radius="lg" mt="lg">
        <Title order={2} size="h4" mb={4}>
          {t('templates.form.sharing')}
        </Title>
        <Text size="sm" c="dimmed" mb="md">
          {t('templates.form.sharing_hint')}
        </Text>
        <SharingPicker value={form.values.allowed} onChange={(allowed) => form.setFieldValue('allowed', allowed)} disabled={disabled} />
      </Card>
      <Group justify="flex-end" gap="sm" mt="lg">
        <Button variant="default" onClick={onCancel}>
          {t('common.cancel')}
        </Button>
        <Button type="submit" leftSection={submitIcon} loading={busy} disabled={disabled} data-testid="template-submit">
          {submitLabel}
        </Button>
      </Group>
    </form>
  );
}
