import { useNavigate } from 'react-router';
import { Button, Stack, Text, ThemeIcon } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconTool } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { z } from 'zod';
import { ZMaintenanceText } from '@vdi/contracts';
import { api } from '../../lib/api';
import { AuthCard } from '../../components/AuthCard';
import { HANDLES_ERROR } from '../../lib/queries';

export default function MaintenancePage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  // 204 (null) when maintenance is off; the page then offers to go back in.
  const text = useQuery({ queryKey: ['maintenance', 'text'], queryFn: () => api.get('/maintenance/text/frontend', ZMaintenanceText.nullable()), meta: HANDLES_ERROR });
  const check = useQuery({ queryKey: ['maintenance'], queryFn: () => api.get('/maintenance', z.boolean()), enabled: false, meta: HANDLES_ERROR });

  const retry = async () => {
    const { data } = await check.refetch();
    await text.refetch();
    if (data === false) void navigate('/desktops', { replace: true });
  };

  return (
    <AuthCard title={text.data?.title || t('maintenance.heading')}>
      <Stack align="center" gap="md">
        <ThemeIcon size={64} radius="xl" variant="light" color="orange">
          <IconTool size={34} />
        </ThemeIcon>
        <Text ta="center" style={{ whiteSpace: 'pre-wrap' }} data-testid="maintenance-body">
          {text.data?.body || t('maintenance.body')}
        </Text>
        <Button variant="light" onClick={() => void retry()} loading={check.isFetching}>
          {t('maintenance.retry')}
        </Button>
      </Stack>
    </AuthCard>
  );
}
