import { useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { Alert, Button, Loader, Stack, TextInput } from '@mantine/core';
import { useForm } from '@mantine/form';
import { IconAlertCircle, IconCircleCheck, IconMailCheck } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { AUTH, request } from '../../lib/api';
import { errorMessage } from '../../lib/errors';
import { readToken } from '../../lib/token';
import { rules } from '../../lib/validation';
import { useAction } from '../../lib/use-action';
import { AuthCard } from '../../components/AuthCard';
import { stepTokenOf } from './api';
import { RedirectCountdown } from './RedirectCountdown';

/** With ?token= it verifies; with a verification-required step it asks where to send the link. */
export default function VerifyEmailPage() {
  const { t, i18n } = useTranslation();
  const [params] = useSearchParams();
  const linkToken = params.get('token');
  const stepToken = stepTokenOf('email-verification-required');
  const [state, setState] = useState<'idle' | 'verifying' | 'verified' | 'sent'>(linkToken ? 'verifying' : 'idle');
  const [sentTo, setSentTo] = useState('');
  const { busy, error, setError, run } = useAction();
  const started = useRef(false);
  const r = rules(t);
  const form = useForm({ initialValues: { email: readToken(stepToken)?.current_email ?? '' }, validate: { email: r.all(r.required, r.email) } });

  useEffect(() => {
    if (!linkToken || started.current) return;
    started.current = true;
    request(`${AUTH}/verify-email`, { method: 'POST', bearer: linkToken })
      .then(() => setState('verified'))
      .catch((err) => {
        setError(errorMessage(t, err, (k) => i18n.exists(k)));
        setState('idle');
      });
  }, [linkToken, t, i18n, setError]);

  return (
    <AuthCard title={t('verify_email.heading')} subtitle={state === 'idle' && stepToken ? t('verify_email.subheading') : undefined}>
      <Stack>
        {error && <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert">{error}</Alert>}
        {state === 'verifying' && <Stack align="center"><Loader /><span>{t('verify_email.verifying')}</span></Stack>}
        {state === 'verified' && (
          <>
            <Alert color="teal" icon={<IconCircleCheck size={18} />} data-testid="email-verified">
              {t('verify_email.verified')}
            </Alert>
            <RedirectCountdown />
          </>
        )}
        {state === 'sent' && (
          <Alert color="teal" icon={<IconMailCheck size={18} />}>
            {t('verify_email.sent', { email: sentTo })}
          </Alert>
        )}
        {state === 'idle' && stepToken && (
          <form
            noValidate
            onSubmit={form.onSubmit((v) =>
              run(async () => {
                await request(`${AUTH}/request-email-verification`, { method: 'POST', body: { email: v.email.trim() }, bearer: stepToken });
                setSentTo(v.email.trim());
                setState('sent');
              }),
            )}
          >
            <Stack>
              <TextInput label={t('verify_email.email')} type="email" {...form.getInputProps('email')} />
              <Button type="submit" loading={busy}>
                {t('verify_email.submit')}
              </Button>
            </Stack>
          </form>
        )}
      </Stack>
    </AuthCard>
  );
}
