import { useState } from 'react';
import { Alert, Button, Group, List, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { IconAlertTriangle, IconDownload, IconRefresh } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { HttpError } from '../../lib/api';
import { downloadVpnFile, resetVpn } from './api';
import '../../i18n/areas/vpn-bastion';

const unavailable = (err: unknown) => err instanceof HttpError && err.code === 'no_wireguard_keys';

/** The profile's VPN dialog: what the file is for, its download, and the reset (with a confirmation). */
export function VpnPanel() {
  const { t } = useTranslation();
  const [confirm, setConfirm] = useState(false);
  const [off, setOff] = useState(false);
  const onError = (err: unknown) => (unavailable(err) ? setOff(true) : handleError(err));
  const download = useMutation({ mutationFn: downloadVpnFile, onSuccess: () => notifySuccess(t('vpn.downloaded')), onError });
  const reset = useMutation({
    mutationFn: resetVpn,
    onSuccess: () => {
      setConfirm(false);
      notifySuccess(t('vpn.reset_done'));
    },
    onError,
  });
  if (off)
    return (
      <Alert color="gray" variant="light" icon={<IconAlertTriangle size={18} />} data-testid="vpn-unavailable">
        {t('vpn.unavailable')}
      </Alert>
    );
  return (
    <Stack gap="md" data-testid="vpn-panel">
      <Text size="sm">{t('vpn.intro')}</Text>
      <List type="ordered" size="sm" spacing={4}>
        <List.Item>{t('vpn.step_install')}</List.Item>
        <List.Item>{t('vpn.step_import')}</List.Item>
        <List.Item>{t('vpn.step_activate')}</List.Item>
      </List>
      <Group>
        <Button leftSection={<IconDownload size={16} />} loading={download.isPending} onClick={() => download.mutate()} data-testid="vpn-download">
          {t('vpn.download')}
        </Button>
      </Group>
      <Text size="xs" c="dimmed">
        {t('vpn.keep_secret')}
      </Text>
      {confirm ? (
        <Alert color="orange" variant="light" icon={<IconAlertTriangle size={18} />} p="sm" data-testid="vpn-reset-confirm-box">
          <Stack gap="xs">
            <Text size="sm">{t('vpn.reset_confirm')}</Text>
            <Group gap="xs" justify="flex-end">
              <Button size="xs" variant="default" onClick={() => setConfirm(false)}>
                {t('common.cancel')}
              </Button>
              <Button size="xs" color="orange" loading={reset.isPending} onClick={() => reset.mutate()} data-testid="vpn-reset-confirm">
                {t('vpn.reset')}
              </Button>
            </Group>
          </Stack>
        </Alert>
      ) : (
        <Group justify="space-between" wrap="wrap" gap="xs">
          <Text size="xs" c="dimmed" style={{ flex: '1 1 200px' }}>
            {t('vpn.reset_hint')}
          </Text>
          <Button size="xs" variant="default" leftSection={<IconRefresh size={14} />} onClick={() => setConfirm(true)} data-testid="vpn-reset">
            {t('vpn.reset')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}
