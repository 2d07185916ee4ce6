import { NumberInput, SimpleGrid, Switch } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../../components/PageHeader';
import { SettingCard, SettingsBody, useSettingForm } from './SettingCard';
import { useSettingsLive } from './live';
import '../../../i18n/areas/admin-system';

/** Minutes in the form, seconds on the server; an empty field keeps the server's configured value. */
const toMinutes = (s: number | null) => (s === null ? '' : Math.round(s / 60));
const toSeconds = (m: number | string) => (m === '' || m === undefined ? null : Number(m) * 60);

function RecycleBinCard() {
  const { t } = useTranslation();
  const s = useSettingForm('recycle_bin', (v) => ({ cutoff_hours: v.cutoff_hours, default_delete: v.default_delete }));
  return (
    <SettingCard title={t('admin_system.limits.recycle_title')} description={t('admin_system.limits.recycle_description')} testId="recycle-card" onSave={s.save} busy={s.busy} dirty={s.dirty} error={s.error} query={s.query}>
      <NumberInput label={t('admin_system.limits.cutoff_hours')} min={0} max={100000} allowDecimal={false} suffix={` ${t('admin_system.units.hours')}`} maw={280} data-testid="recycle-hours" {...s.form.getInputProps('cutoff_hours')} />
      <Switch label={t('admin_system.limits.default_delete')} description={t('admin_system.limits.default_delete_hint')} {...s.form.getInputProps('default_delete', { type: 'checkbox' })} />
    </SettingCard>
  );
}

function SessionsCard() {
  const { t } = useTranslation();
  const s = useSettingForm(
    'sessions',
    (v) => ({ token: toMinutes(v.token_seconds), renew: toMinutes(v.max_renew_seconds), max: toMinutes(v.max_seconds) }),
    (v) => ({ token_seconds: toSeconds(v.token), max_renew_seconds: toSeconds(v.renew), max_seconds: toSeconds(v.max) }),
  );
  const field = (name: 'token' | 'renew' | 'max', min: number) => (
    <NumberInput
      label={t(`admin_system.limits.session_${name}`)}
      description={t(`admin_system.limits.session_${name}_hint`)}
      placeholder={t('admin_system.limits.server_default')}
      min={min}
      allowDecimal={false}
      suffix={` ${t('admin_system.units.minutes')}`}
      data-testid={`session-${name}`}
      {...s.form.getInputProps(name)}
    />
  );
  return (
    <SettingCard title={t('admin_system.limits.sessions_title')} description={t('admin_system.limits.sessions_description')} testId="sessions-card" onSave={s.save} busy={s.busy} dirty={s.dirty} error={s.error} query={s.query}>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        {field('token', 1)}
        {field('renew', 1)}
        {field('max', 5)}
      </SimpleGrid>
    </SettingCard>
  );
}

function TemporaryCard() {
  const { t } = useTranslation();
  const s = useSettingForm('temporary_desktops', (v) => ({ inactivity_minutes: v.inactivity_minutes }));
  return (
    <SettingCard title={t('admin_system.limits.temporary_title')} description={t('admin_system.limits.temporary_description')} testId="temporary-card" onSave={s.save} busy={s.busy} dirty={s.dirty} error={s.error} query={s.query}>
      <NumberInput label={t('admin_system.limits.inactivity')} description={t('admin_system.limits.zero_never')} min={0} max={10080} allowDecimal={false} suffix={` ${t('admin_system.units.minutes')}`} maw={280} {...s.form.getInputProps('inactivity_minutes')} />
    </SettingCard>
  );
}

function AuditRetentionCard() {
  const { t } = useTranslation();
  const s = useSettingForm('audit', (v) => ({ retention_days: v.retention_days }));
  return (
    <SettingCard title={t('admin_system.limits.audit_title')} description={t('admin_system.limits.audit_description')} testId="audit-retention-card" onSave={s.save} busy={s.busy} dirty={s.dirty} error={s.error} query={s.query}>
      <NumberInput label={t('admin_system.limits.retention_days')} description={t('admin_system.limits.zero_forever')} min={0} max={36500} allowDecimal={false} suffix={` ${t('admin_system.units.days')}`} maw={280} {...s.form.getInputProps('retention_days')} />
    </SettingCard>
  );
}

/** Retention and lifetimes: recycle bin, sessions, temporary desktops, audit log (`/isard-admin/settings/limits`). */
export default function LimitsPage() {
  const { t } = useTranslation();
  useSettingsLive();
  return (
    <>
      <PageHeader title={t('admin_system.limits.heading')} subtitle={t('admin_system.limits.subheading')} />
      <SettingsBody>
        <RecycleBinCard />
        <SessionsCard />
        <TemporaryCard />
        <AuditRetentionCard />
      </SettingsBody>
    </>
  );
}
