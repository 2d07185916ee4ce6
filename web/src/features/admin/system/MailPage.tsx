import { useState } from 'react';
import { Alert, Group, NumberInput, PasswordInput, SimpleGrid, Switch, TextInput } from '@mantine/core';
import { IconAlertTriangle, IconSend } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { notifySuccess } from '../../../lib/error-handler';
import { useAction } from '../../../lib/use-action';
import { HttpError } from '../../../lib/api';
import { errorMessage } from '../../../lib/errors';
import { rules } from '../../../lib/validation';
import { PageHeader } from '../../../components/PageHeader';
import { SettingCard, SettingsBody, useSettingForm } from './SettingCard';
import { sendTestMail } from './api';
import { useSettingsLive } from './live';
import '../../../i18n/areas/admin-system';

/** An address people open: http(s)://host[:port][/path], no query. */
const isPublicAddress = (value: string) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash;
  } catch {
    return false;
  }
};

/**
 * The portal's public address (links in mails are made from it), SMTP for password resets and e-mail
 * verification, and a test mail (`/isard-admin/settings/mail`).
 */
export default function MailPage() {
  const { t, i18n } = useTranslation();
  useSettingsLive();
  const address = useSettingForm('public_address', (v) => ({ url: v.url }), (v) => ({ url: v.url.trim().replace(/\/+$/, '') }));
  const fromEnvironment = address.query.data?.environment ?? null;
  const publicUrl = fromEnvironment ?? address.query.data?.url ?? '';
  const s = useSettingForm(
    'mail',
    (v) => ({ enabled: v.enabled, host: v.host, port: v.port, secure: v.secure, user: v.user, password: '', from: v.from }),
    // An empty password field keeps the stored one.
    ({ password, ...rest }) => (password ? { ...rest, password } : rest),
  );
  const [to, setTo] = useState('');
  // Mail off: the admin is the one to turn it on (the catalogue's text tells people to ask them).
  const test = useAction((err) =>
    err instanceof HttpError && err.code === 'email_not_configured' ? t('admin_system.mail.not_configured') : errorMessage(t, err, (k) => i18n.exists(k)),
  );
  const passwordSet = s.query.data?.password_set ?? false;
  return (
    <>
      <PageHeader title={t('admin_system.mail.heading')} subtitle={t('admin_system.mail.subheading')} />
      <SettingsBody>
        <SettingCard
          title={t('admin_system.mail.public_title')}
          description={t('admin_system.mail.public_description')}
          testId="public-address-card"
          onSave={() => {
            const url = address.form.getValues().url.trim();
            if (url && !isPublicAddress(url)) return address.form.setFieldError('url', t('admin_system.mail.public_invalid'));
            address.save();
          }}
          busy={address.busy}
          dirty={address.dirty}
          error={address.error}
          query={address.query}
        >
          {fromEnvironment ? (
            <TextInput label={t('admin_system.mail.public_url')} value={fromEnvironment} description={t('admin_system.mail.public_environment')} readOnly data-testid="public-address-url" />
          ) : (
            <TextInput
              label={t('admin_system.mail.public_url')}
              placeholder="https://vdi.example.org"
              type="url"
              maxLength={2000}
              data-testid="public-address-url"
              {...address.form.getInputProps('url')}
            />
          )}
        </SettingCard>
        <SettingCard title={t('admin_system.mail.title')} description={t('admin_system.mail.description')} testId="mail-card" onSave={s.save} busy={s.busy} dirty={s.dirty} error={s.error} query={s.query}>
          {!address.query.isPending && !publicUrl && (
            <Alert color="orange" icon={<IconAlertTriangle size={18} />} data-testid="mail-needs-public-address">
              {t('admin_system.mail.public_missing')}
            </Alert>
          )}
          <Switch label={t('admin_system.mail.enabled')} data-testid="mail-enabled" {...s.form.getInputProps('enabled', { type: 'checkbox' })} />
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput label={t('admin_system.mail.host')} placeholder="smtp.example.org" maxLength={255} data-testid="mail-host" {...s.form.getInputProps('host')} />
            <NumberInput label={t('admin_system.mail.port')} min={1} max={65535} allowDecimal={false} data-testid="mail-port" {...s.form.getInputProps('port')} />
            <TextInput label={t('admin_system.mail.user')} maxLength={255} autoComplete="off" {...s.form.getInputProps('user')} />
            <PasswordInput
              label={t('admin_system.mail.password')}
              placeholder={passwordSet ? t('admin_system.mail.password_kept') : undefined}
              autoComplete="new-password"
              maxLength={512}
              {...s.form.getInputProps('password')}
            />
            <TextInput label={t('admin_system.mail.from')} placeholder="VDI portal <no-reply@example.org>" maxLength={320} {...s.form.getInputProps('from')} />
          </SimpleGrid>
          <Switch label={t('admin_system.mail.secure')} description={t('admin_system.mail.secure_hint')} {...s.form.getInputProps('secure', { type: 'checkbox' })} />
        </SettingCard>
        <SettingCard
          title={t('admin_system.mail.test_title')}
          description={t('admin_system.mail.test_description')}
          testId="mail-test-card"
          onSave={() =>
            test.run(async () => {
              const bad = rules(t).email(to.trim());
              if (bad) return test.setError(bad);
              await sendTestMail(to.trim());
              notifySuccess(t('admin_system.mail.test_sent', { to: to.trim() }));
            })
          }
          busy={test.busy}
          dirty={to.trim() !== ''}
          error={test.error}
          query={{ isPending: false, error: null }}
          saveLabel={t('admin_system.mail.test_send')}
          saveIcon={<IconSend size={16} />}
        >
          <Group align="flex-end">
            <TextInput
              label={t('admin_system.mail.test_to')}
              type="email"
              value={to}
              onChange={(e) => setTo(e.currentTarget.value)}
              style={{ flex: 1 }}
              data-testid="mail-test-to"
            />
          </Group>
        </SettingCard>
      </SettingsBody>
    </>
  );
}
