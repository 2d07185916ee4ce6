import { useCallback, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { Alert, Anchor, Stack, Text } from '@mantine/core';
import { IconAlertCircle, IconShieldCheck } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ZRecoveryCodes, ZTwoFactorEnrolment } from '@vdi/contracts';
import { AUTH, request } from '../../lib/api';
import { session } from '../../lib/session';
import { SIGNED_IN_HOME, SIGNED_IN_STATE, STEP_ROUTES } from '../../lib/sign-in-steps';
import { queryClient } from '../../lib/queries';
import { useAction } from '../../lib/use-action';
import { AuthCard } from '../../components/AuthCard';
import { EnrolmentSteps, RecoveryCodesList } from '../../components/TwoFactorSetup';
import { login, stepTokenOf } from './api';

/**
 * The enrolment a sign-in leads to when two-factor is required of someone without it: the QR code, a code to
 * confirm, the recovery codes; then signed in (the steps after go on).
 */
export default function TwoFactorEnrolPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const token = stepTokenOf('two-factor-enrolment-required');
  const [codes, setCodes] = useState<string[] | null>(null);
  const finishing = useAction();
  const start = useCallback(() => request(`${AUTH}/two-factor/enrolment`, { method: 'POST', bearer: token ?? null }, ZTwoFactorEnrolment), [token]);
  const confirm = useCallback(
    async (code: string) => (await request(`${AUTH}/two-factor/enrolment/confirm`, { method: 'POST', body: { code }, bearer: token ?? null }, ZRecoveryCodes)).recovery_codes,
    [token],
  );
  const finish = () =>
    finishing.run(async () => {
      const type = await login({ bearer: token });
      if (type === 'login') {
        queryClient.clear();
        await navigate(SIGNED_IN_HOME, { replace: true, state: SIGNED_IN_STATE });
      } else await navigate(STEP_ROUTES[type] ?? '/login', { replace: true });
    });

  if (!token) {
    return (
      <AuthCard title={t('two_factor.enrol_heading')}>
        <Stack>
          <Alert color="orange" icon={<IconAlertCircle size={18} />}>{t('two_factor.step_ended')}</Alert>
          <Anchor component={Link} to="/login" size="sm" onClick={() => session.clear()}>
            {t('two_factor.back_to_sign_in')}
          </Anchor>
        </Stack>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t(codes ? 'two_factor.recovery_heading' : 'two_factor.enrol_heading')} subtitle={codes ? undefined : t('two_factor.enrol_required')} width={520}>
      {codes ? (
        <Stack gap="sm">
          {finishing.error && (
            <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert">
              {finishing.error}
            </Alert>
          )}
          <RecoveryCodesList codes={codes} onDone={() => void finish()} doneLabel={t('two_factor.continue')} />
        </Stack>
      ) : (
        <Stack gap="sm">
          <Alert variant="light" icon={<IconShieldCheck size={18} />}>
            <Text size="sm">{t('two_factor.app_hint')}</Text>
          </Alert>
          <EnrolmentSteps start={start} confirm={confirm} onEnrolled={setCodes} />
        </Stack>
      )}
    </AuthCard>
  );
}
