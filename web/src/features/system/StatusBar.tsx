import { Alert } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconAlertTriangle, IconInfoCircle } from '@tabler/icons-react';
import { ZStatusBarAnswer } from '@vdi/contracts';
import { api } from '../../lib/api';
import { HANDLES_ERROR } from '../../lib/queries';

const COLORS = { info: 'blue', warning: 'yellow', danger: 'red' } as const;

/** The admin's status-bar notification (setting `status_bar`) above every signed-in screen; read again every minute. */
export function StatusBar() {
  const { data } = useQuery({
    queryKey: ['status_bar'],
    queryFn: () => api.get('/notifications/status_bar', ZStatusBarAnswer),
    refetchInterval: 60_000,
    refetchOnWindowFocus: true,
    retry: false,
    meta: HANDLES_ERROR,
  });
  if (!data || !data.text) return null;
  const Icon = data.level === 'info' ? IconInfoCircle : IconAlertTriangle;
  return (
    <Alert color={COLORS[data.level]} icon={<Icon size={18} />} mb="md" radius="md" data-testid="status-bar" role="status">
      {data.text}
    </Alert>
  );
}
