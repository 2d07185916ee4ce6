import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router';
import { Alert, Button, Group, ScrollArea, Skeleton, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ZDisclaimer } from '@vdi/contracts';
import { api, AUTH, request } from '../../lib/api';
import { useAction } from '../../lib/use-action';
import { session } from '../../lib/session';
import { queryClient, HANDLES_ERROR } from '../../lib/queries';
import { AuthCard } from '../../components/AuthCard';
import { login, stepTokenOf } from './api';
import { REDIRECT_SECONDS } from './RedirectCountdown';
import '../../i18n/areas/account';
import { SIGNED_IN_HOME, SIGNED_IN_STATE } from '../../lib/sign-in-steps';

/** The desktops screen is told it comes from a sign-in. */
const arrival = (to: string) => (to === SIGNED_IN_HOME ? SIGNED_IN_STATE : null);

/** After accepting: a countdown to the desktops, or go at once (spec 001 §9). */
function AcceptedCountdown({ to }: { to: string }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [left, setLeft] = useState(REDIRECT_SECONDS);
  useEffect(() => {
    if (left <= 0) return void navigate(to, { replace: true, state: arrival(to) });
    const id = setTimeout(() => setLeft((s) => s - 1), 1000);
    return () => clearTimeout(id);
  }, [left, navigate, to]);
  return (
    <Group justify="space-between" data-testid="disclaimer-accepted">
      <Text size="sm" c="dimmed">
        {t('account.disclaimer.accepted', { seconds: left })}
      </Text>
      <Button onClick={() => void navigate(to, { replace: true, state: arrival(to) })} data-testid="disclaimer-continue">
        {t('account.disclaimer.continue_now')}
      </Button>
    </Group>
  );
}

/** Accepting signs in again with the disclaimer token and lands on the desktops (no countdown). */
export default function DisclaimerPage() {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const token = stepTokenOf('disclaimer-acknowledgement-required');
  const [next, setNext] = useState<string | null>(null);
  const disclaimer = useQuery({
    queryKey: ['disclaimer', i18n.language],
    queryFn: () => api.get(`/disclaimer?lang=${encodeURIComponent(i18n.language)}`, ZDisclaimer, { bearer: null }),
    meta: HANDLES_ERROR,
  });
  const { busy, error, run } = useAction();

  const accept = () => {
    if (!token) return void navigate('/login');
    return run(async () => {
      await request(`${AUTH}/acknowledge-disclaimer`, { method: 'POST', bearer: token });
      const type = await login({ bearer: token });
      queryClient.clear();
      // A further step (e-mail verification, password reset) continues at once; the desktops after a countdown.
      if (type === 'login') setNext(SIGNED_IN_HOME);
      else await navigate('/login', { replace: true });
    });
  };

  return (
    <AuthCard title={disclaimer.data?.title || t('disclaimer.heading')} width={640}>
      {error && <Alert color="red" icon={<IconAlertCircle size={18} />} mb="md" role="alert">{error}</Alert>}
      {disclaimer.isLoading ? (
        <Skeleton h={160} />
      ) : (
        <ScrollArea.Autosize mah="50vh" type="auto" mb="lg">
          {disclaimer.data?.body ? (
            <Text style={{ whiteSpace: 'pre-wrap' }} data-testid="disclaimer-body">
              {disclaimer.data.body}
            </Text>
          ) : (
            <Text c="dimmed" size="sm" data-testid="disclaimer-empty">
              {t('account.disclaimer.empty')}
            </Text>
          )}
        </ScrollArea.Autosize>
      )}
      {next && <AcceptedCountdown to={next} />}
      {token && !next && (
        <Group justify="flex-end">
          <Button
            variant="default"
            onClick={() => {
              session.clear();
              void navigate('/login');
            }}
          >
            {t('disclaimer.decline')}
          </Button>
          <Button onClick={() => void accept()} loading={busy} data-testid="disclaimer-accept">
            {t('account.disclaimer.accept')}
          </Button>
        </Group>
      )}
    </AuthCard>
  );
}
