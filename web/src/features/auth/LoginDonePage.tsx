import { useEffect } from 'react';
import { useNavigate } from 'react-router';
import { Center, Loader, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { session } from '../../lib/session';
import { SIGNED_IN_HOME, SIGNED_IN_STATE, STEP_ROUTES } from '../../lib/sign-in-steps';
import { queryClient } from '../../lib/queries';
import { adoptToken } from './api';

/**
 * Where a sign-in through an OpenID or SAML provider ends: the server left its token (a session, or the next
 * step's: register, category-select, …) in the step cookie; it is kept and the person goes on.
 */
export default function LoginDonePage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  useEffect(() => {
    const token = session.stepToken();
    if (!token) {
      void navigate('/login', { replace: true });
      return;
    }
    void adoptToken(token).then(async (type) => {
      if (type === 'login') {
        queryClient.clear();
        await navigate(SIGNED_IN_HOME, { replace: true, state: SIGNED_IN_STATE });
      } else await navigate(STEP_ROUTES[type] ?? '/login', { replace: true });
    });
  }, [navigate]);
  return (
    <Center h="100vh">
      <Stack align="center" gap="sm">
        <Loader />
        <Text c="dimmed">{t('login.finishing')}</Text>
      </Stack>
    </Center>
  );
}
