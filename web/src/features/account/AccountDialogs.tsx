import { useState } from 'react';
import { Alert, Button, Group, List, Modal, PasswordInput, Stack, Text, Textarea, TextInput, ThemeIcon, VisuallyHidden } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertCircle, IconCheck, IconCircleCheck, IconInfoCircle, IconX } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { z } from 'zod';
import { ZPasswordPolicy, type TUser } from '@vdi/contracts';
import { api } from '../../lib/api';
import { useAction } from '../../lib/use-action';
import { rules } from '../../lib/validation';
import { notifySuccess } from '../../lib/error-handler';
import { policyChecks } from './policy';
import '../../i18n/areas/account';
import { VpnPanel } from '../../entities/vpn-bastion/VpnPanel';
import { HANDLES_ERROR } from '../../lib/queries';

export type AccountAction = 'password' | 'email' | 'import' | 'vpn';
export const ACCOUNT_ACTIONS: readonly AccountAction[] = ['password', 'email', 'import', 'vpn'];

const policyQuery = {
  queryKey: ['user', 'password-policy'],
  queryFn: () => api.get('/user/password-policy', z.union([ZPasswordPolicy, z.literal(false)])),
  meta: HANDLES_ERROR,
} as const;

function ErrorAlert({ message, testId }: { message: string | null; testId: string }) {
  if (!message) return null;
  return (
    <Alert color="red" icon={<IconAlertCircle size={18} />} data-testid={testId} role="alert">
      {message}
    </Alert>
  );
}

/** The policy from the server as a checklist that follows the typed password. */
export function PasswordChecklist({ password, username }: { password: string; username: string }) {
  const { t } = useTranslation();
  const { data: policy } = useQuery(policyQuery);
  if (!policy) return null;
  const checks = policyChecks(policy, password, username);
  if (checks.length === 0) return null;
  return (
    <div data-testid="password-checklist">
      <Text size="sm" fw={500} mb={4}>
        {t('account.password.policy')}
      </Text>
      <List size="sm" spacing={4} center>
        {checks.map((c) => (
          <List.Item
            key={c.key}
            data-met={c.met === null ? 'unknown' : String(c.met)}
            icon={
              <ThemeIcon size={18} radius="xl" variant="light" color={c.met === null ? 'gray' : c.met ? 'teal' : 'red'}>
                {c.met === null ? <IconInfoCircle size={12} /> : c.met ? <IconCheck size={12} /> : <IconX size={12} />}
              </ThemeIcon>
            }
          >
            <Text size="sm" c={c.met === false ? 'dimmed' : undefined}>
              {t(`account.password.${c.key}`, { count: c.count })}
              {c.met !== null && <VisuallyHidden> ({t(c.met ? 'account.password.met' : 'account.password.not_met')})</VisuallyHidden>}
            </Text>
          </List.Item>
        ))}
      </List>
    </div>
  );
}

function PasswordDialog({ user, onClose }: { user: TUser; onClose: () => void }) {
  const { t } = useTranslation();
  const r = rules(t);
  const { busy, error, run } = useAction();
  const form = useForm({
    initialValues: { current: '', password: '', confirm: '' },
    validate: { current: r.required, password: r.required, confirm: (v, values) => r.sameAs(values.password)(v) },
  });
  const submit = form.onSubmit((v) =>
    run(async () => {
      await api.put('/user', { current_password: v.current, password: v.password });
      notifySuccess(t('account.password.done'));
      onClose();
    }),
  );
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <PasswordInput label={t('account.password.current')} autoComplete="current-password" data-testid="password-current" {...form.getInputProps('current')} />
        <PasswordInput label={t('account.password.new')} autoComplete="new-password" data-testid="password-new" {...form.getInputProps('password')} />
        <PasswordChecklist password={form.values.password} username={user.username} />
        <PasswordInput label={t('account.password.confirm')} autoComplete="new-password" data-testid="password-confirm" {...form.getInputProps('confirm')} />
        <ErrorAlert message={error} testId="password-error" />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" loading={busy} data-testid="password-submit">
            {t('account.password.submit')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function EmailDialog({ user, mailEnabled, onClose }: { user: TUser; mailEnabled: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const r = rules(t);
  const queryClient = useQueryClient();
  const { busy, error, run } = useAction();
  const [sent, setSent] = useState<string | null>(null);
  const form = useForm({ initialValues: { email: '' }, validate: { email: r.all(r.required, r.email) } });
  if (!mailEnabled) {
    return (
      <Stack>
        <Alert color="orange" icon={<IconAlertCircle size={18} />} data-testid="email-not-configured">
          {t('account.email.not_configured')}
        </Alert>
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {t('common.close')}
          </Button>
        </Group>
      </Stack>
    );
  }
  if (sent) {
    return (
      <Stack>
        <Alert color="teal" icon={<IconCircleCheck size={18} />} data-testid="email-sent">
          {t('account.email.sent', { email: sent })}
        </Alert>
        <Group justify="flex-end">
          <Button onClick={onClose}>{t('common.close')}</Button>
        </Group>
      </Stack>
    );
  }
  const submit = form.onSubmit((v) =>
    run(async () => {
      await api.put('/user', { email: v.email.trim() });
      await queryClient.invalidateQueries({ queryKey: ['user'], exact: true });
      setSent(v.email.trim());
    }),
  );
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <Text size="sm" c="dimmed">
          {t('account.email.hint')}
        </Text>
        <TextInput label={t('account.email.current')} value={user.email} readOnly variant="filled" />
        <TextInput label={t('account.email.new')} type="email" autoComplete="email" data-testid="email-new" {...form.getInputProps('email')} />
        <ErrorAlert message={error} testId="email-error" />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" loading={busy} data-testid="email-submit">
            {t('account.email.submit')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function ImportDialog({ enabled, onClose }: { enabled: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const r = rules(t);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { busy, error, run } = useAction();
  const form = useForm({ initialValues: { code: '' }, validate: { code: r.required } });
  if (!enabled) {
    return (
      <Alert color="orange" icon={<IconAlertCircle size={18} />} data-testid="import-not-enabled">
        {t('account.import.not_enabled')}
      </Alert>
    );
  }
  const submit = form.onSubmit((v) =>
    run(async () => {
      await api.post('/user_migration/import', { token: v.code.trim() });
      await queryClient.invalidateQueries();
      navigate('/migration');
    }),
  );
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <Text size="sm" c="dimmed">
          {t('account.import.intro')}
        </Text>
        <Textarea label={t('account.import.code')} autosize minRows={3} maxRows={6} data-testid="import-code" styles={{ input: { fontFamily: 'monospace', fontSize: 12 } }} {...form.getInputProps('code')} />
        <ErrorAlert message={error} testId="import-error" />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" loading={busy} data-testid="import-submit">
            {t('account.import.submit')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** The profile's dialogs, one open at a time (`/profile/{action}` opens one directly). */
export function AccountDialog(props: { action: AccountAction | null; user: TUser; mailEnabled: boolean; importEnabled: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const { action, user, onClose } = props;
  const titles: Record<AccountAction, string> = {
    password: t('account.password.title'),
    email: t('account.email.title'),
    import: t('account.import.title'),
    vpn: t('account.vpn_dialog.title'),
  };
  return (
    <Modal opened={Boolean(action)} onClose={onClose} title={action ? titles[action] : ''} centered size="md" data-testid={`dialog-${action ?? 'none'}`}>
      {action === 'password' && <PasswordDialog user={user} onClose={onClose} />}
      {action === 'email' && <EmailDialog user={user} mailEnabled={props.mailEnabled} onClose={onClose} />}
      {action === 'import' && <ImportDialog enabled={props.importEnabled} onClose={onClose} />}
      {action === 'vpn' && <VpnPanel />}
    </Modal>
  );
}
