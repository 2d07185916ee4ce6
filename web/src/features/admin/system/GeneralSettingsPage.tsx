import { Badge, Checkbox, Group, SegmentedControl, Stack, Switch, Text, TextInput, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../../components/PageHeader';
import { SettingCard, SettingsBody, useSettingForm } from './SettingCard';
import { useSettingsLive } from './live';
import '../../../i18n/areas/admin-system';
import { BastionSettingCard, VpnSettingCard } from './BastionSettingCard';
import { TwoFactorSettingCard } from './TwoFactorSettingCard';

/** Providers the sign-in page may offer (`form`: user name and password). */
const PROVIDERS = ['form'] as const;

function MaintenanceCard() {
  const { t } = useTranslation();
  const s = useSettingForm('maintenance', (v) => ({ enabled: v.enabled, title: v.title, body: v.body }));
  const on = s.form.getValues().enabled;
  return (
    <SettingCard
      title={t('admin_system.maintenance.title')}
      description={t('admin_system.maintenance.description')}
      testId="maintenance-card"
      onSave={s.save}
      busy={s.busy}
      dirty={s.dirty}
      error={s.error}
      query={s.query}
    >
      <Group justify="space-between" wrap="nowrap">
        <Switch
          label={t('admin_system.maintenance.enabled')}
          description={t('admin_system.maintenance.enabled_hint')}
          data-testid="maintenance-enabled"
          {...s.form.getInputProps('enabled', { type: 'checkbox' })}
        />
        {s.query.data?.enabled && (
          <Badge color="orange" variant="light" data-testid="maintenance-on-badge">
            {t('admin_system.maintenance.on_now')}
          </Badge>
        )}
      </Group>
      <TextInput label={t('admin_system.maintenance.heading')} maxLength={200} data-testid="maintenance-title" {...s.form.getInputProps('title')} />
      <Textarea
        label={t('admin_system.maintenance.body')}
        description={on ? undefined : t('admin_system.maintenance.body_hint')}
        autosize
        minRows={3}
        maxLength={5000}
        data-testid="maintenance-body"
        {...s.form.getInputProps('body')}
      />
    </SettingCard>
  );
}

function StatusBarCard() {
  const { t } = useTranslation();
  const s = useSettingForm('status_bar', (v) => ({ enabled: v.enabled, level: v.level, text: v.text }));
  return (
    <SettingCard
      title={t('admin_system.status_bar.title')}
      description={t('admin_system.status_bar.description')}
      testId="status-bar-card"
      onSave={s.save}
      busy={s.busy}
      dirty={s.dirty}
      error={s.error}
      query={s.query}
    >
      <Switch label={t('admin_system.status_bar.enabled')} data-testid="status-bar-enabled" {...s.form.getInputProps('enabled', { type: 'checkbox' })} />
      <Stack gap={4}>
        <Text size="sm" fw={500}>
          {t('admin_system.status_bar.level')}
        </Text>
        <SegmentedControl
          data={(['info', 'warning', 'danger'] as const).map((l) => ({ value: l, label: t(`admin_system.status_bar.levels.${l}`) }))}
          data-testid="status-bar-level"
          {...s.form.getInputProps('level')}
        />
      </Stack>
      <Textarea label={t('admin_system.status_bar.text')} autosize minRows={2} maxLength={1000} data-testid="status-bar-text" {...s.form.getInputProps('text')} />
    </SettingCard>
  );
}

function LoginCard() {
  const { t } = useTranslation();
  const s = useSettingForm(
    'login',
    (v) => ({
      hidden_providers: v.hidden_providers,
      hide_categories_select: v.hide_categories_select,
      notice_enabled: v.notice.enabled,
      notice_title: v.notice.title,
      notice_text: v.notice.text,
    }),
    (v) => ({
      hidden_providers: v.hidden_providers,
      hide_categories_select: v.hide_categories_select,
      notice: { enabled: v.notice_enabled, title: v.notice_title, text: v.notice_text },
    }),
  );
  const hidden = s.form.getValues().hidden_providers ?? [];
  return (
    <SettingCard
      title={t('admin_system.login.title')}
      description={t('admin_system.login.description')}
      testId="login-card"
      onSave={s.save}
      busy={s.busy}
      dirty={s.dirty}
      error={s.error}
      query={s.query}
    >
      <Stack gap={6}>
        <Text size="sm" fw={500}>
          {t('admin_system.login.providers')}
        </Text>
        {PROVIDERS.map((p) => (
          <Checkbox
            key={p}
            label={t(`admin_system.login.provider.${p}`)}
            checked={!hidden.includes(p)}
            onChange={(e) =>
              s.form.setFieldValue('hidden_providers', e.currentTarget.checked ? hidden.filter((h) => h !== p) : [...hidden, p])
            }
            data-testid={`login-provider-${p}`}
          />
        ))}
      </Stack>
      <Switch
        label={t('admin_system.login.hide_categories')}
        description={t('admin_system.login.hide_categories_hint')}
        data-testid="login-hide-categories"
        {...s.form.getInputProps('hide_categories_select', { type: 'checkbox' })}
      />
      <Switch label={t('admin_system.login.notice')} data-testid="login-notice-enabled" {...s.form.getInputProps('notice_enabled', { type: 'checkbox' })} />
      <TextInput label={t('admin_system.login.notice_title')} maxLength={200} {...s.form.getInputProps('notice_title')} />
      <Textarea label={t('admin_system.login.notice_text')} autosize minRows={2} maxLength={2000} {...s.form.getInputProps('notice_text')} />
    </SettingCard>
  );
}

/** Maintenance, the status-bar notification and the sign-in page (`/isard-admin/settings`). */
export default function GeneralSettingsPage() {
  const { t } = useTranslation();
  useSettingsLive();
  return (
    <>
      <PageHeader title={t('admin_system.general.heading')} subtitle={t('admin_system.general.subheading')} />
      <SettingsBody>
        <MaintenanceCard />
        <StatusBarCard />
        <LoginCard />
        <TwoFactorSettingCard />
        <BastionSettingCard />
        <VpnSettingCard />
      </SettingsBody>
    </>
  );
}
