import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { Alert, Anchor, Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { IconAlertCircle, IconArrowLeft } from '@tabler/icons-react';
import dayjs from 'dayjs';
import { useTranslation } from 'react-i18next';
import { HttpError } from '../../lib/api';
import { errorMessage } from '../../lib/errors';
import { session } from '../../lib/session';
import { SIGNED_IN_HOME, SIGNED_IN_STATE, STEP_ROUTES } from '../../lib/sign-in-steps';
import { queryClient } from '../../lib/queries';
import { LOCAL_DATE_TIME } from '../../lib/validation';
import { AuthCard } from '../../components/AuthCard';
import { TotpCodeInput } from '../../components/TwoFactorSetup';
import { login, stepTokenOf } from './api';

/** A wrong code, a limit reached (when to retry), a step that ended (sign in again). */
function codeError(t: ReturnType<typeof useTranslation>['t'], exists: (k: string) => boolean, err: unknown): string {
  if (err instanceof HttpError && err.status === 429) {
    const at = (err.body.params?.retry_after as string | undefined) ?? err.headers.get('retry-after') ?? undefined;
    const when = at ? dayjs(at) : dayjs().add(1, 'minute');
    return when.isSame(dayjs(), 'day') ? t('login.too_many_today', { time: when.format('HH:mm') }) : t('login.too_many_later', { date: when.format(LOCAL_DATE_TIME) });
  }
  if (err instanceof HttpError && (err.code === 'invalid_token' || err.code === 'token_expired')) return t('two_factor.step_ended');
  return errorMessage(t, err, exists);
}

/** After the password of someone with two-factor on: a code of their authenticator app, or a recovery code. */
export default function TwoFactorPage() {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const token = stepTokenOf('two-factor-required');
  const [recovery, setRecovery] = useState(false);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async () => {
    if (!token) return void navigate('/login');
    setBusy(true);
    setError(null);
    try {
      const type = await login({ bearer: token, code: code.trim() });
      if (type === 'login') {
        queryClient.clear();
        await navigate(SIGNED_IN_HOME, { replace: true, state: SIGNED_IN_STATE });
      } else await navigate(STEP_ROUTES[type] ?? '/login', { replace: true });
    } catch (err) {
      setError(codeError(t, (k) => i18n.exists(k), err));
      setCode('');
    } finally {
      setBusy(false);
    }
  };

  const back = (
    <Anchor
      component={Link}
      to="/login"
      size="sm"
      onClick={() => session.clear()}
      data-testid="two-factor-back"
    >
      <Group gap={4} component="span">
        <IconArrowLeft size={14} />
        {t('two_factor.back_to_sign_in')}
      </Group>
    </Anchor>
  );

  if (!token) {
    return (
      <AuthCard title={t('two_factor.heading')}>
        <Stack>
          <Alert color="orange" icon={<IconAlertCircle size={18} />}>{t('two_factor.step_ended')}</Alert>
          {back}
        </Stack>
      </AuthCard>
    );
  }

  return (
    <AuthCard title={t('two_factor.heading')} subtitle={t(recovery ? 'two_factor.recovery_subheading' : 'two_factor.subheading')}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
        noValidate
      >
        <Stack gap="md">
          {error && (
            <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert" data-testid="two-factor-error">
              {error}
            </Alert>
          )}
          {recovery ? (
            <TextInput
              key="recovery"
              label={t('two_factor.recovery_code')}
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
              autoComplete="off"
              autoCapitalize="none"
              spellCheck={false}
              placeholder="xxxxx-xxxxx"
              maxLength={32}
              autoFocus
              required
              data-testid="two-factor-recovery-input"
            />
          ) : (
            <TotpCodeInput key="totp" value={code} onChange={setCode} testId="two-factor-code" />
          )}
          <Button type="submit" fullWidth loading={busy} disabled={!code.trim()} data-testid="two-factor-submit">
            {t('two_factor.verify')}
          </Button>
          <Group justify="space-between" wrap="wrap" gap="xs">
            {back}
            <Anchor
              component="button"
              type="button"
              size="sm"
              onClick={() => {
                setRecovery((r) => !r);
                setCode('');
                setError(null);
              }}
              data-testid="two-factor-toggle-recovery"
            >
              {t(recovery ? 'two_factor.use_app' : 'two_factor.use_recovery')}
            </Anchor>
          </Group>
          {recovery && (
            <Text size="xs" c="dimmed">
              {t('two_factor.recovery_hint')}
            </Text>
          )}
        </Stack>
      </form>
    </AuthCard>
  );
}
