import { Switch } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { SettingCard, useSettingForm } from './SettingCard';
import '../../../i18n/areas/vpn-bastion';

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

/** The VPN's policy (setting `vpn`): admins' tunnels reach every started desktop, or only their own. */
export function VpnSettingCard() {
  const { t } = useTranslation();
  const s = useSettingForm('vpn', (v) => ({ admins_reach_all: v.admins_reach_all }));
  return (
    <SettingCard title={t('vpn.setting_title')} description={t('vpn.setting_description')} testId="vpn-card" onSave={s.save} busy={s.busy} dirty={s.dirty} error={s.error} query={s.query}>
      <Switch label={t('vpn.setting_admins')} data-testid="vpn-setting-admins" {...s.form.getInputProps('admins_reach_all', { type: 'checkbox' })} />
    </SettingCard>
  );
}
