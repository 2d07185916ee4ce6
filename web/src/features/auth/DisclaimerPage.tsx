import { useNavigate } from 'react-router';
import { Alert, Button, Group, ScrollArea, Skeleton, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ZDisclaimer } from '@vdi/contracts';
import { api, AUTH, request } from '../../lib/api';
import { useAction } from '../../lib/use-action';
import { session } from '../../lib/session';
import { queryClient } from '../../app/queries';
import { AuthCard } from '../../layout/BareLayout';
import { login, stepTokenOf } from './api';

/** Accepting signs in again with the disclaimer token and lands on the desktops (no countdown). */
export default function DisclaimerPage() {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const token = stepTokenOf('disclaimer-acknowledgement-required');
  // In the interface's language (the admin writes one text per language).
  const lang = i18n.language.slice(0, 2);
  const disclaimer = useQuery({ queryKey: ['disclaimer', lang], queryFn: () => api.get('/disclaimer', ZDisclaimer, { bearer: null, query: { lang } }) });
  const { busy, error, run } = useAction();

  const accept = () => {
    if (!token) return void navigate('/login');
    return run(async () => {
      await request(`${AUTH}/acknowledge-disclaimer`, { method: 'POST', bearer: token });
      const type = await login({ bearer: token });
      queryClient.clear();
      await navigate(type === 'login' ? '/desktops' : '/login', { replace: true });
    });
  };

  return (
    <AuthCard title={disclaimer.data?.title || t('disclaimer.heading')} width={640}>
      {error && <Alert color="red" icon={<IconAlertCircle size={18} />} mb="md" role="alert">{error}</Alert>}
      {disclaimer.isLoading ? (
        <Skeleton h={160} />
      ) : (
        <ScrollArea.Autosize mah="50vh" type="auto" mb="lg">
          
            <Text style={{ whiteSpace: 'pre-wrap' }} data-testid="disclaimer-body">
              {disclaimer.data?.body}
            </Text>
          
        </ScrollArea.Autosize>
      )}
      {token && (
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
            {t('disclaimer.accept')}
          </Button>
        </Group>
      )}
    </AuthCard>
  );
}
