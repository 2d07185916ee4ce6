import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { Alert, Button, List, PasswordInput, Stack, Text } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconCircleCheck } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ZPasswordPolicy, type TPasswordPolicy } from '@vdi/contracts';
import { z } from 'zod';
import { api, AUTH, request } from '../../lib/api';
import { useAction } from '../../lib/use-action';
import { session } from '../../lib/session';
import { rules } from '../../lib/validation';
import { AuthCard } from '../../components/AuthCard';
import { stepTokenOf } from './api';
import { RedirectCountdown } from './RedirectCountdown';
import { HANDLES_ERROR } from '../../lib/queries';

function PolicyList({ policy }: { policy: TPasswordPolicy }) {
  const { t } = useTranslation();
  const items = [
    policy.length > 0 && t('reset_password.policy_length', { count: policy.length }),
    policy.digits > 0 && t('reset_password.policy_digits', { count: policy.digits }),
    policy.uppercase > 0 && t('reset_password.policy_uppercase', { count: policy.uppercase }),
    policy.lowercase > 0 && t('reset_password.policy_lowercase', { count: policy.lowercase }),
    policy.special_characters > 0 && t('reset_password.policy_special', { count: policy.special_characters }),
    policy.not_username && t('reset_password.policy_not_username'),
    policy.old_passwords > 0 && t('reset_password.policy_old', { count: policy.old_passwords }),
  ].filter(Boolean) as string[];
  if (items.length === 0) return null;
  return (
    <Alert variant="light" color="indigo" p="sm">
      <Text size="sm" fw={500} mb={4}>
        {t('reset_password.policy')}
      </Text>
      <List size="sm" spacing={2}>
        {items.map((i) => (
          <List.Item key={i}>{i}</List.Item>
        ))}
      </List>
    </Alert>
  );
}

/** A reset link from a mail (?token=) or a reset required at sign-in (the step token). */
export default function ResetPasswordPage() {
  const { t } = useTranslation();
  const [params] = useSearchParams();
  const token = params.get('token') ?? stepTokenOf('password-reset-required', 'password-reset');
  const required = !params.get('token');
  const [done, setDone] = useState(false);
  const { busy, error, run } = useAction();
  const r = rules(t);
  const policy = useQuery({
    queryKey: ['password-policy', token],
    enabled: Boolean(token),
    queryFn: () => api.get('/user/expired/password-policy', z.union([ZPasswordPolicy, z.literal(false)]), { bearer: token }),
    meta: HANDLES_ERROR,
  });
  const form = useForm({
    initialValues: { password: '', confirm: '' },
    validate: { password: r.required, confirm: (v, values) => r.sameAs(values.password)(v) },
  });

  // Once done the step token is gone with the session (session.clear()): the page still says it is done.
  if (!token && !done) {
    return (
      <AuthCard title={t('reset_password.heading')}>
        <Alert color="orange" icon={<IconAlertCircle size={18} />}>
          {t('reset_password.missing_token')}
        </Alert>
      </AuthCard>
    );
  }

  return (
    <AuthCard title={t('reset_password.heading')} subtitle={required ? t('reset_password.required_subheading') : undefined}>
      {done ? (
        <Stack>
          <Alert color="teal" icon={<IconCircleCheck size={18} />} data-testid="reset-done">
            {t('reset_password.done')}
          </Alert>
          <RedirectCountdown />
        </Stack>
      ) : (
        <form
          noValidate
          onSubmit={form.onSubmit((v) =>
            run(async () => {
              await request(`${AUTH}/reset-password`, { method: 'POST', body: { password: v.password }, bearer: token });
              session.clear();
              setDone(true);
            }),
          )}
        >
          <Stack>
            {error && <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert">{error}</Alert>}
            {policy.data && <PolicyList policy={policy.data} />}
            <PasswordInput label={t('reset_password.new_password')} autoComplete="new-password" {...form.getInputProps('password')} data-testid="reset-password" />
            <PasswordInput label={t('reset_password.confirm_password')} autoComplete="new-password" {...form.getInputProps('confirm')} data-testid="reset-confirm" />
            <Button type="submit" loading={busy} data-testid="reset-submit">
              {t('reset_password.submit')}
            </Button>
          </Stack>
        </form>
      )}
    </AuthCard>
  );
}
