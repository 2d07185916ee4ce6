import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { Alert, Anchor, Button, PasswordInput, Select, Stack, Text, TextInput } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { SIGNED_IN_HOME, SIGNED_IN_STATE } from '../../lib/sign-in-steps';
import { api, AUTH, HttpError, request } from '../../lib/api';
import { errorMessage } from '../../lib/errors';
import { session } from '../../lib/session';
import { readToken } from '../../lib/token';
import { rules } from '../../lib/validation';
import { queryClient } from '../../lib/queries';
import { AuthCard } from '../../components/AuthCard';
import { categoriesQuery, login, stepTokenOf } from './api';
import { builtInText } from '../../lib/built-in-text';

/** Register screen messages: 401 session ended, 403 e-mail domain, 404 code, 409 exists, 500. */
function registerError(t: ReturnType<typeof useTranslation>['t'], exists: (k: string) => boolean, err: unknown) {
  if (!(err instanceof HttpError)) return t('register.server_error');
  if (err.status === 401) return t('register.session_ended');
  if (err.status === 403) return t('register.email_domain');
  if (err.status === 404) return t('register.code_not_found');
  if (err.status === 409) return err.code === 'username_exists' ? t('errors.username_exists') : t('register.user_exists');
  if (err.status === 500) return t('register.server_error');
  return errorMessage(t, err, exists);
}

export default function RegisterPage() {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const categories = useQuery(categoriesQuery);
  const [registerToken, setRegisterToken] = useState(() => stepTokenOf('register'));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const r = rules(t);

  const identity = useForm({
    initialValues: { category: 'default', username: '', name: '', email: '', password: '', confirm: '' },
    validate: {
      username: r.all(r.required, r.minLength(3), r.maxLength(64), r.inputFormat),
      name: r.all(r.required, r.maxLength(128)),
      email: r.all(r.required, r.email),
      password: r.required,
      confirm: (v, values) => r.sameAs(values.password)(v),
    },
  });
  const codeForm = useForm({ initialValues: { code: '' }, validate: { code: r.required } });

  const attempt = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      if (err instanceof HttpError && err.status === 401) {
        session.clear();
        setRegisterToken(undefined);
      }
      setError(registerError(t, (k) => i18n.exists(k), err));
    } finally {
      setBusy(false);
    }
  };

  if (!registerToken) {
    return (
      <AuthCard title={t('register.heading')} subtitle={t('register.subheading')} width={460}>
        <form
          noValidate
          onSubmit={identity.onSubmit((v) =>
            attempt(async () => {
              const token = await request<string>(`${AUTH}/signup`, {
                method: 'POST',
                body: { category_id: v.category, username: v.username.trim(), name: v.name.trim(), email: v.email.trim(), password: v.password },
                bearer: null,
                text: true,
              });
              session.store(token);
              setRegisterToken(token);
            }),
          )}
        >
          <Stack gap="sm">
            {error && <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert">{error}</Alert>}
            {(categories.data?.length ?? 0) > 1 && (
              <Select label={t('login.category')} data={categories.data!.map((c) => ({ value: c.id, label: builtInText(t, c.name) }))} allowDeselect={false} {...identity.getInputProps('category')} data-testid="register-category" />
            )}
            <TextInput label={t('login.username')} autoComplete="username" {...identity.getInputProps('username')} data-testid="register-username" />
            <TextInput label={t('register.name')} autoComplete="name" {...identity.getInputProps('name')} data-testid="register-name" />
            <TextInput label={t('register.email')} type="email" autoComplete="email" {...identity.getInputProps('email')} data-testid="register-email" />
            <PasswordInput label={t('login.password')} autoComplete="new-password" {...identity.getInputProps('password')} data-testid="register-password" />
            <PasswordInput label={t('register.confirm_password')} autoComplete="new-password" {...identity.getInputProps('confirm')} data-testid="register-confirm" />
            <Button type="submit" loading={busy} mt="xs" data-testid="register-next">
              {t('register.next')}
            </Button>
            <Text size="sm" ta="center" c="dimmed">
              {t('register.have_account')}{' '}
              <Anchor component={Link} to="/login">
                {t('login.submit')}
              </Anchor>
            </Text>
          </Stack>
        </form>
      </AuthCard>
    );
  }

  const username = readToken(registerToken)?.username ?? '';
  return (
    <AuthCard title={t('register.code_heading')} subtitle={t('register.code_subheading', { username })}>
      <form
        noValidate
        onSubmit={codeForm.onSubmit((v) =>
          attempt(async () => {
            await api.post('/user/register', { code: v.code.trim() }, undefined, { bearer: registerToken });
            const type = await login({ bearer: registerToken });
            queryClient.clear();
            if (type === 'login') await navigate(SIGNED_IN_HOME, { replace: true, state: SIGNED_IN_STATE });
            else await navigate('/login', { replace: true });
          }),
        )}
      >
        <Stack gap="sm">
          {error && <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert">{error}</Alert>}
          <TextInput label={t('register.code')} autoFocus {...codeForm.getInputProps('code')} data-testid="register-code" />
          <Button type="submit" loading={busy} data-testid="register-submit">
            {t('register.submit')}
          </Button>
          <Button
            variant="subtle"
            onClick={() => {
              session.clear();
              void navigate('/login');
            }}
          >
            {t('common.cancel')}
          </Button>
        </Stack>
      </form>
    </AuthCard>
  );
}
