import { Switch } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { SettingCard, useSettingForm } from '../admin/system/SettingCard';
import './texts';

/** The admin's switch of the bastion (setting `bastion`): off until turned on. */
export function BastionSettingCard() {
  const { t } = useTranslation();
  const s = useSettingForm('bastion', (v) => ({ enabled: v.enabled }));
  return (
    <SettingCard title={t('bastion.setting_title')} description={t('bastion.setting_description')} testId="bastion-card" onSave={s.save} busy={s.busy} dirty={s.dirty} error={s.error} query={s.query}>
      <Switch label={t('bastion.setting_enabled')} data-testid="bastion-setting-enabled" {...s.form.getInputProps('enabled', { type: 'checkbox' })} />
    </SettingCard>
  );
}
